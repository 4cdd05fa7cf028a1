//! The `heddle` command line. Every flag has an environment variable, so a
//! service manager can configure Heddle without arguments.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Heddle: build LLM agents as graphs, run them, watch them run.
#[derive(Debug, Parser)]
#[command(
    name = "heddle",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// `heddle` with no subcommand takes `serve`'s flags.
    #[command(flatten)]
    pub serve: ServeArgs,
}

impl Cli {
    /// The subcommand to run; `heddle` alone means `heddle serve`.
    pub fn command(self) -> Command {
        self.command.unwrap_or(Command::Serve(self.serve))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the web app (the default).
    Serve(ServeArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "HEDDLE_HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,

    /// Port to listen on (0 picks a free one).
    #[arg(long, env = "HEDDLE_PORT", default_value_t = 3000)]
    pub port: u16,

    /// The database. Defaults to ./data/heddle.db, created on first start.
    #[arg(long, env = "DATABASE_URL", default_value = crate::db::DEFAULT_URL)]
    pub database_url: String,

    /// Directory holding the built site (pkg/ with the wasm, JS and CSS).
    #[arg(long, env = "HEDDLE_SITE_ROOT", default_value = "target/site")]
    pub site_root: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_subcommand_means_serve_with_defaults() {
        let Command::Serve(args) = Cli::parse_from(["heddle"]).command();
        assert_eq!(args.port, 3000);
        assert_eq!(args.host.to_string(), "127.0.0.1");
    }

    #[test]
    fn flags_change_host_and_port() {
        let cli = Cli::parse_from(["heddle", "serve", "--host", "0.0.0.0", "--port", "8080"]);
        let Command::Serve(args) = cli.command();
        assert_eq!(args.port, 8080);
        assert_eq!(args.host.to_string(), "0.0.0.0");
    }

    #[test]
    fn serve_flags_work_without_the_subcommand() {
        let Command::Serve(args) = Cli::parse_from(["heddle", "--port", "8081"]).command();
        assert_eq!(args.port, 8081);
    }

    #[test]
    fn a_bad_port_is_a_usage_error() {
        assert!(Cli::try_parse_from(["heddle", "serve", "--port", "70000"]).is_err());
    }
}
