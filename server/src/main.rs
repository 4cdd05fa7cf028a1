//! The `heddle` binary: parse the command line, set up logging, run.
//! Errors end here as one readable line and exit code 1.

use clap::Parser;
use heddle_server::config::{Cli, Command};
use tracing_subscriber::EnvFilter;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info")),
        )
        .with_writer(std::io::stderr)
        .init();

    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("heddle: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command() {
        Command::Serve(args) => runtime.block_on(heddle_server::serve::serve(args))?,
    }
    Ok(())
}
