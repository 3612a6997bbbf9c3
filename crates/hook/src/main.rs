//! `cairn-hook <agent>`: the command hook agents run (what `cairn hook
//! <agent>` does, in a binary a fraction of the size), and `cairn-hook spool
//! flush --quiet`, which a hook starts to deliver a long backlog. Always
//! exits 0 on the hook path: a hook never fails the agent.

use cairn_hook::{
    agent::Agent,
    client_config::{ClientConfig, ProcessEnv},
    hook,
    spool::{Spool, flush},
};

const USAGE: &str =
    "usage: cairn-hook <claude-code|cursor|codex|gemini|windsurf>\n       cairn-hook spool flush [--quiet]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // `hook <agent>` too, so a `cairn hook <agent>` command line can name this binary.
    let words = match args.as_slice() {
        ["hook", rest @ ..] => rest,
        all => all,
    };
    match words {
        ["--version" | "-V"] => println!("cairn-hook {}", env!("CARGO_PKG_VERSION")),
        [name] => match Agent::from_slug(name) {
            Some(agent) => hook::run(agent, &ProcessEnv),
            None => usage(),
        },
        ["spool", "flush", flags @ ..] if flags.iter().all(|f| *f == "--quiet") => {
            let quiet = !flags.is_empty();
            let done = ClientConfig::load(&ProcessEnv)
                .and_then(|config| flush(&Spool::for_config(&config), &config, quiet));
            if let Err(e) = done {
                eprintln!("cairn-hook: {e:#}");
                std::process::exit(1);
            }
        }
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2);
}
