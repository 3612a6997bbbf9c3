//! The agents Cairn's client knows: their names on the command line and on
//! the server's `/v1/hooks/{agent}` route.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Agent {
    #[cfg_attr(feature = "clap", value(name = "claude-code"))]
    ClaudeCode,
    Cursor,
    Codex,
    Gemini,
    Windsurf,
}

impl Agent {
    pub const ALL: [Agent; 5] = [
        Agent::ClaudeCode,
        Agent::Cursor,
        Agent::Codex,
        Agent::Gemini,
        Agent::Windsurf,
    ];

    /// The agent a command-line name (its slug) names.
    pub fn from_slug(slug: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.slug() == slug)
    }

    /// The name used on the command line and in `/v1/hooks/{agent}`.
    pub fn slug(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Cursor => "cursor",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Windsurf => "windsurf",
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.slug())
    }
}
