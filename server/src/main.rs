//! The `heddle` binary: parse the command line, set up logging, run.
//! Errors end here as one readable line and a non-zero exit code (see
//! `cli` for the codes).

use std::process::ExitCode;

use clap::Parser;
use heddle_server::cli::{self, CliError, Outcome};
use heddle_server::config::{Cli, Command};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let command = Cli::parse().command();
    // The server logs its requests; headless commands keep stderr for
    // warnings so their output stays readable.
    let default_filter = match command {
        Command::Serve(_) => "info,sqlx=warn,tower_http=info",
        _ => "warn",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter)),
        )
        .with_writer(std::io::stderr)
        .init();

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("heddle: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(command))
}

/// `heddle migrate`: opens both databases (bringing each schema up to
/// date), copies, and prints each table's rows.
async fn migrate(args: &heddle_server::config::MigrateArgs) -> ExitCode {
    use heddle_store::db::open as db;
    let copied = async {
        let from = db::connect(&args.from).await?;
        let to = db::connect(&args.to).await?;
        let copied = heddle_server::db_copy::copy(&from, &to).await?;
        from.close().await;
        to.close().await;
        anyhow::Ok(copied)
    };
    match copied.await {
        Ok(copied) => {
            println!(
                "Copied {} into {}; every table has as many rows on both sides:",
                db::redact(&args.from),
                db::redact(&args.to)
            );
            for table in copied {
                println!("  {:<20} {:>10}", table.table, table.rows);
            }
            println!(
                "Secrets were copied sealed: start Heddle on the new database with the same key \
                 (HEDDLE_SECRET_KEY, or the key file {}).",
                db::default_key_file(&args.from).display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("heddle: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> ExitCode {
    let (registry, _) = heddle_server::models::registry();
    let registry = match &command {
        // The command line runs the machine user's own graphs: it may read
        // the graph files they name (the server never does).
        Command::Run(_)
        | Command::Resume(_)
        | Command::Recover(_)
        | Command::Validate(_)
        | Command::Eval(_) => {
            let registry = heddle_server::models::with_mcp_tools(registry).await;
            match heddle_server::models::with_operator_files(registry) {
                Ok(registry) => registry.with_file_access(heddle_engine::FileAccess::Allowed),
                Err(error) => {
                    eprintln!("heddle: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
        _ => registry,
    };
    let stdout = || Box::new(std::io::stdout()) as Box<dyn std::io::Write + Send>;
    let result: Result<Outcome, CliError> = match command {
        Command::Migrate(args) => return migrate(&args).await,
        Command::Serve(args) => {
            return match heddle_server::serve::serve(args).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("heddle: {error}");
                    ExitCode::FAILURE
                }
            };
        }
        Command::Prune(args) => cli::prune(&args, stdout()).await,
        Command::Run(args) => cli::run(&args, &registry, stdout()).await,
        Command::Resume(args) => cli::resume(&args, &registry, stdout()).await,
        Command::Recover(args) => cli::recover(&args, &registry, stdout()).await,
        Command::Validate(args) => cli::validate(&args.graph, &registry, &mut std::io::stdout()),
        Command::Eval(args) => cli::eval(&args, &registry, stdout()).await,
        Command::Threads(args) => match heddle_server::cli::open_store(&args.db).await {
            Ok(store) => cli::threads(&store, &mut std::io::stdout()).await,
            Err(error) => Err(error),
        },
        Command::History(args) => match heddle_server::cli::open_store(&args.db.db).await {
            Ok(store) => cli::history(&store, &args.thread, &mut std::io::stdout()).await,
            Err(error) => Err(error),
        },
    };
    match result {
        Ok(outcome) => ExitCode::from(outcome.code()),
        Err(error) => {
            eprintln!("heddle: {error}");
            ExitCode::from(error.code())
        }
    }
}
