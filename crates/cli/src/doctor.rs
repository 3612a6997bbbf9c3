//! `cairn doctor`. (In progress.)

use crate::client_config::{ClientConfig, Env};

pub fn run(_config: &ClientConfig, _env: &dyn Env) -> anyhow::Result<bool> {
    anyhow::bail!("not built yet")
}
