//! `heddle serve`: open the database, bind, serve until Ctrl-C or SIGTERM,
//! then finish the requests in flight and close the database cleanly.

use std::net::SocketAddr;

use axum::serve::ListenerExt;
use tokio::net::TcpListener;

use heddle_store::accounts::SignupPolicy;
use heddle_store::secrets::{self as secrets, KeyError, SecretKey};

use crate::config::{ServeArgs, ServerRole, SignupArg};
use crate::runs::Runs;
use crate::sessions::DbSessions;
use crate::state::Settings;
use crate::{AppState, router};
use heddle_store::db::open::{self as db, DbError};

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The database could not be opened.
    #[error(transparent)]
    Database(#[from] DbError),
    /// The address could not be bound (in use, or not ours).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The key for secrets could not be read or made.
    #[error("{0}")]
    Key(KeyError),
    /// The run manager could not start.
    #[error("cannot start the run manager: {0}")]
    Runs(heddle_engine::run::StoreError),
    /// The server failed while running.
    #[error("the server stopped with an error: {0}")]
    Io(#[from] std::io::Error),
    /// `--role web` or `worker` on SQLite, whose file has one server.
    #[error(
        "`--role {0}` needs PostgreSQL: a SQLite file is served by one server, which does everything (`--role all`)"
    )]
    RoleNeedsPostgres(&'static str),
    /// The OTLP trace export could not be set up.
    #[error(transparent)]
    Traces(#[from] crate::telemetry::TracesError),
    /// A configuration file (tool policies, prices) is wrong.
    #[error(transparent)]
    Config(#[from] crate::models::ConfigFileError),
}

/// Runs the server until a shutdown signal.
pub async fn serve(args: ServeArgs) -> Result<(), ServeError> {
    // Held until the server stops: one server per SQLite file.
    let _claim = db::claim(&args.database_url)?;
    let database = db::connect(&args.database_url).await?;
    tracing::info!(database = %db::redact(&args.database_url), "database ready");
    if args.role != ServerRole::All && matches!(database, heddle_store::db::Db::Sqlite(_)) {
        database.close().await;
        return Err(ServeError::RoleNeedsPostgres(match args.role {
            ServerRole::Web => "web",
            _ => "worker",
        }));
    }
    heddle_store::schedules::set_min_interval_seconds(args.schedule_min_seconds);
    let (registry, model) = crate::models::registry();
    tracing::info!(%model, "default model");
    let scripts = args
        .script_threads
        .unwrap_or_else(heddle_engine::run::WorkerPool::default_threads);
    // After the MCP tools: a policy may name one of them.
    let registry =
        crate::models::with_operator_files(crate::models::with_mcp_tools(registry).await)?
            .with_script_pool(std::sync::Arc::new(heddle_engine::run::WorkerPool::new(
                scripts,
            )))
            .with_value_limits(heddle_engine::state::ValueLimits::new(
                usize::try_from(args.max_value_depth).unwrap_or(usize::MAX),
                usize::try_from(args.max_value_bytes).unwrap_or(usize::MAX),
            ))
            .with_ceilings(args.ceilings());
    let secret_key = match &args.secret_key {
        Some(hex) => SecretKey::from_hex(hex),
        None => SecretKey::load_or_create(
            &args
                .key_file
                .clone()
                .unwrap_or_else(|| db::default_key_file(&args.database_url)),
        ),
    }
    .map_err(ServeError::Key)?;
    match secrets::seal_older(&database, &secret_key).await {
        Ok(0) => {}
        Ok(sealed) => tracing::info!(sealed, "encrypted the secrets saved before encryption"),
        Err(error) => tracing::error!(%error, "cannot encrypt older secrets"),
    }
    let runs = Runs::with_key(database.clone(), args.max_runs, registry, secret_key)
        .await
        .map_err(ServeError::Runs)?;
    if let Some(traces) = crate::telemetry::Traces::from_env()? {
        tracing::info!("runs are exported as OpenTelemetry traces over OTLP/HTTP");
        runs.telemetry().export_traces(traces);
    }
    if args.lease_seconds.is_finite() && args.lease_seconds > 0.0 {
        runs.set_lease_duration(std::time::Duration::from_secs_f64(args.lease_seconds));
    }
    runs.set_executes(args.role.executes());
    runs.set_max_active(
        (args.max_run_active_secs > 0)
            .then(|| std::time::Duration::from_secs(args.max_run_active_secs)),
    );
    if !args.role.serves() {
        return work(args, database, runs).await;
    }

    let embedded_site = match &args.site_root {
        Some(_) => None,
        None => crate::embedded_site::Site::embedded(),
    };
    let site_root = args
        .site_root
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("target/site"));
    if embedded_site.is_some() {
        tracing::info!("serving the site this binary carries");
    } else if !site_root.join("pkg").join("heddle.js").is_file() {
        tracing::warn!(
            site_root = %site_root.display(),
            "the built site was not found: pages render but stay static; build it with `cargo xtask build`"
        );
    }

    let addr = SocketAddr::new(args.host, args.port);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener.local_addr()?;
    // Streamed answers (server-sent events, chat chunks, websocket frames)
    // are many small writes: without TCP_NODELAY each waits for the
    // client's delayed acknowledgement of the last, some 40 ms.
    let listener = listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY on a connection");
        }
    });
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let mut settings = Settings::default()
        .with_public_url(args.public_url.as_deref())
        .with_allowed_hosts(args.allowed_hosts.iter().map(String::as_str));
    settings.signup = match args.signup {
        SignupArg::Open => SignupPolicy::Open,
        SignupArg::Closed => SignupPolicy::Closed,
    };
    settings.max_runs_per_user = args.max_runs_per_user;
    settings.max_runs_per_owner = usize::try_from(args.max_runs_per_owner).unwrap_or(usize::MAX);
    settings.trust_proxy = args.trust_proxy;
    settings.embedded_site = embedded_site;
    settings.metrics_token = args
        .metrics_token
        .clone()
        .filter(|token| !token.trim().is_empty());
    let state = AppState::new(database.clone(), runs.clone(), shutdown, &site_root, local)
        .with_settings(settings);
    let sweeper = DbSessions::new(database.clone()).sweep_expired();
    let scheduler = crate::schedules::keep_firing(runs.clone());
    let experiments = crate::experiments::keep_driving(runs.clone());
    let pruner = crate::retention::keep_pruning(
        runs.clone(),
        args.retention.policy(),
        std::time::Duration::from_secs(args.prune_every_mins.saturating_mul(60)),
    );
    let executing = match args.role.executes() {
        true => Some(execute(&runs).await),
        false => None,
    };
    let events_listener = runs.listen_for_events(state.auth.events().clone());

    let signal = shutdown_signal();
    // Printed (not only logged) so scripts and tests can find the port.
    println!("Heddle is listening on http://{local}");
    axum::serve(
        listener,
        router(state).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        signal.await;
        // Websockets close; requests in flight finish.
        let _ = stop.send(true);
    })
    .await?;

    if let Some(listener) = events_listener {
        listener.abort();
    }
    if let Some(leases) = executing {
        hand_back(&runs, leases).await;
    }
    sweeper.abort();
    scheduler.abort();
    experiments.abort();
    if let Some(pruner) = pruner {
        pruner.abort();
    }
    // The spans of the runs that just stopped are built first; the exporter
    // blocks while it sends those still waiting.
    runs.telemetry().settled().await;
    let telemetry = std::sync::Arc::clone(runs.telemetry());
    let _ = tokio::task::spawn_blocking(move || {
        if let Some(traces) = telemetry.traces() {
            traces.shutdown();
        }
    })
    .await;
    database.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// `--role worker`: executes runs, serves nothing, until a shutdown signal.
async fn work(
    args: ServeArgs,
    database: heddle_store::db::Db,
    runs: Runs,
) -> Result<(), ServeError> {
    let signal = shutdown_signal();
    let leases = execute(&runs).await;
    let scheduler = crate::schedules::keep_firing(runs.clone());
    let experiments = crate::experiments::keep_driving(runs.clone());
    let pruner = crate::retention::keep_pruning(
        runs.clone(),
        args.retention.policy(),
        std::time::Duration::from_secs(args.prune_every_mins.saturating_mul(60)),
    );
    // Access changes are nobody's concern here: no socket is open.
    let events_listener = runs.listen_for_events(Default::default());
    println!(
        "Heddle worker is running {} runs at once on {}",
        args.max_runs.max(1),
        db::redact(&args.database_url)
    );
    signal.await;
    if let Some(listener) = events_listener {
        listener.abort();
    }
    scheduler.abort();
    experiments.abort();
    if let Some(pruner) = pruner {
        pruner.abort();
    }
    hand_back(&runs, leases).await;
    database.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Takes over what the last start left, and keeps this server's leases
/// (claiming queued and lapsed runs) until it stops.
async fn execute(runs: &Runs) -> tokio::task::JoinHandle<()> {
    if let Err(error) = runs.recover().await {
        tracing::error!(%error, "could not recover the runs of the last start");
    }
    runs.keep_leases()
}

/// How long a graceful shutdown waits for runs to finish their step.
const STEP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs stop after their current step (or after [`STEP_GRACE`], at their
/// last checkpoint) and their leases are given back: another server takes
/// them over at once, or the next start does.
async fn hand_back(runs: &Runs, leases: tokio::task::JoinHandle<()>) {
    leases.abort();
    runs.hand_over(STEP_GRACE).await;
    match runs.release_leases().await {
        Ok(0) => {}
        Ok(released) => tracing::info!(released, "handed running work back"),
        Err(error) => tracing::error!(%error, "cannot release run leases"),
    }
}

/// Resolves on Ctrl-C or SIGTERM. The handlers are installed when this is
/// called (before the server says it listens), not when first polled, so
/// a signal sent right after start-up is not lost.
fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    let terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|error| tracing::error!(%error, "cannot listen for SIGTERM"))
        .ok();
    let ctrl_c = tokio::signal::ctrl_c();
    async move {
        #[cfg(unix)]
        let terminate = async move {
            match terminate {
                Some(mut signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let terminate = std::future::pending::<()>();
        let ctrl_c = async move {
            if let Err(error) = ctrl_c.await {
                tracing::error!(%error, "cannot listen for Ctrl-C");
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = ctrl_c => {}
            () = terminate => {}
        }
        tracing::info!("shutting down: finishing requests in flight");
    }
}
