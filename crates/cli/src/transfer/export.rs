//! `cairn export --project <id|slug>`: the export stream copied to stdout or a file as it arrives.

use std::{fs::File, io::Write};

use super::ExportArgs;
use crate::admin_api::segment;

pub fn run(args: &ExportArgs) -> anyhow::Result<()> {
    let api = args.api.api(None)?;
    let mut body = api.get_stream(&format!("/v1/projects/{}/export", segment(&args.project)))?;
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(File::create(path)?),
        None => Box::new(std::io::stdout().lock()),
    };
    // A body cut short (the server failed mid-way) is a read error here: exit non-zero.
    let bytes =
        std::io::copy(&mut body, &mut out).map_err(|e| anyhow::anyhow!("the export was cut short: {e}"))?;
    out.flush()?;
    if args.output.is_some() {
        eprintln!("exported {bytes} bytes");
    }
    Ok(())
}
