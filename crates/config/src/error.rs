/// What is wrong with a configuration, and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Malformed TOML, an unknown setting or a value of the wrong type; the
    /// message names the setting (`agents.support.colour: unknown field`).
    #[error("{origin}: {message}")]
    Invalid {
        /// The file, or `the environment` when no file was given.
        origin: String,
        /// The TOML reader's account, with its path and line.
        message: String,
    },
    /// A `PARLANCE__A__B` override goes through a setting that is not a
    /// table (`PARLANCE__LISTEN__X` when `listen` is a string).
    #[error("{var}: {part} is not a table")]
    NotATable {
        /// The environment variable.
        var: String,
        /// The setting on its path that is not a table.
        part: String,
    },
    /// An environment variable of the wrong form
    /// (`PARLANCE_API_TOKENS=nope`).
    #[error("{var}: {message}")]
    Env {
        /// The environment variable.
        var: String,
        /// What was expected and what it held.
        message: String,
    },
    /// `[tools.NAME] input_schema` is not JSON.
    #[error("tools.{tool}.input_schema: not JSON: {message}")]
    ToolSchema {
        /// The tool.
        tool: String,
        /// The JSON reader's account.
        message: String,
    },
}
