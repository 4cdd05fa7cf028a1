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

// Parsed once per process: the size of `serve`'s flags costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the web app (the default).
    Serve(ServeArgs),
    /// Run a graph headless, printing its events as JSON lines.
    Run(RunArgs),
    /// Resume a thread's paused run with a value.
    Resume(ResumeArgs),
    /// Check a graph file and print every problem.
    Validate(ValidateArgs),
    /// Run a graph over a dataset's examples and score each run; exits 4
    /// when a scorer's mean is under its --min-score.
    Eval(EvalArgs),
    /// List the threads in the database.
    Threads(DbArgs),
    /// List a thread's checkpoints.
    History(HistoryArgs),
    /// Finish the runs a crash left running.
    Recover(RecoverArgs),
    /// Copy everything from one database to another, empty one (SQLite to
    /// PostgreSQL or back), and check the counts. Stop the server first.
    Migrate(MigrateArgs),
    /// Remove old checkpoints and compact old runs' event logs by the
    /// retention policy (safe while servers run).
    Prune(PruneArgs),
}

/// `heddle prune`.
#[derive(Debug, Clone, Args)]
pub struct PruneArgs {
    /// The database (`sqlite://data/heddle.db`, `postgres://...`).
    #[arg(long, env = "DATABASE_URL", default_value = heddle_store::db::open::DEFAULT_URL)]
    pub database_url: String,
    #[command(flatten)]
    pub retention: RetentionArgs,
}

/// What is kept of old runs (docs/runs.md, "Retention"); a graph's own
/// `retention` overrides it for its runs.
#[derive(Debug, Clone, Args)]
pub struct RetentionArgs {
    /// Keep the newest this many checkpoints of each thread, besides every
    /// pause, fork point, run's last checkpoint and pinned one (0 keeps
    /// every checkpoint).
    #[arg(long, env = "HEDDLE_KEEP_CHECKPOINTS", default_value_t = 1000)]
    pub keep_checkpoints: u32,
    /// Compact the event log of a run that ended this many days ago to its
    /// first and last events (0 keeps every log whole).
    #[arg(long, env = "HEDDLE_KEEP_EVENTS_DAYS", default_value_t = 90)]
    pub keep_events_days: u32,
}

impl RetentionArgs {
    /// The policy these flags say.
    pub fn policy(&self) -> heddle_engine::format::Retention {
        heddle_engine::format::Retention {
            keep_checkpoints: std::num::NonZeroU32::new(self.keep_checkpoints),
            keep_events_days: (self.keep_events_days > 0).then_some(self.keep_events_days),
        }
    }
}

/// `heddle migrate`.
#[derive(Debug, Clone, Args)]
pub struct MigrateArgs {
    /// The database to copy from (`sqlite://data/heddle.db`, `postgres://...`).
    #[arg(long)]
    pub from: String,
    /// The database to copy into: created and migrated if needed, and
    /// empty.
    #[arg(long)]
    pub to: String,
}

/// Where runs and checkpoints are kept.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// The SQLite database file (shared with `heddle serve`).
    #[arg(long, env = "HEDDLE_DB", default_value = "data/heddle.db")]
    pub db: PathBuf,
}

/// How a run's progress is printed.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// A readable trace instead of JSON lines.
    #[arg(long)]
    pub pretty: bool,
    /// When checkpoints are written: every step, in the background, or only
    /// at the start, pauses and end.
    #[arg(long, value_enum, default_value = "sync")]
    pub durability: DurabilityArg,
}

/// `--durability`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum DurabilityArg {
    Sync,
    Async,
    Exit,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The graph JSON file (as the editor exports it).
    pub graph: PathBuf,
    /// The run's input: a JSON object of channel values.
    #[arg(long, default_value = "{}")]
    pub input: String,
    /// The thread (conversation) to run on; a new one when absent.
    #[arg(long)]
    pub thread: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ResumeArgs {
    /// The paused thread.
    #[arg(long)]
    pub thread: String,
    /// The answer, as JSON (`'"Ada"'`, `true`, `{"approved": true}`).
    #[arg(long)]
    pub value: String,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    /// The graph JSON file.
    pub graph: PathBuf,
}

/// `heddle eval`.
#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// The graph JSON file (as the editor exports it).
    pub graph: PathBuf,
    /// The examples: one JSON object per line, `{"input": {...},
    /// "reference": ..., "id": "..."}` (`reference` and `id` optional).
    #[arg(long)]
    pub dataset: PathBuf,
    /// The scorers: a JSON list of scorer definitions (docs/evaluations.md).
    #[arg(long)]
    pub scorers: PathBuf,
    /// Runs of each example (the spread of their scores is shown).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// SCORER=VALUE: exit 4 when that scorer's mean is under VALUE
    /// (repeatable).
    #[arg(long = "min-score", value_name = "SCORER=VALUE")]
    pub min_score: Vec<String>,
    /// A readable report instead of JSON lines.
    #[arg(long)]
    pub pretty: bool,
    /// Answers each model and tool call from this recording (a file
    /// `--record` wrote) when the call is the same as one recorded; the
    /// others go to the model or tool.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// With `--replay`: a call not in the recording fails instead of
    /// reaching the model or tool (a run that must be offline and free).
    #[arg(long, requires = "replay")]
    pub replay_only: bool,
    /// Writes every model and tool reply of this evaluation to FILE (JSON
    /// lines), replayed ones included, for a later `--replay`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// The thread.
    #[arg(long)]
    pub thread: String,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RecoverArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub output: OutputArgs,
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
    #[arg(long, env = "DATABASE_URL", default_value = heddle_store::db::open::DEFAULT_URL)]
    pub database_url: String,

    /// Directory holding the built site (pkg/ with the wasm, JS and CSS).
    /// Without it: the site inside the binary when it carries one (a
    /// release build), else target/site.
    #[arg(long, env = "HEDDLE_SITE_ROOT")]
    pub site_root: Option<PathBuf>,

    /// How many runs execute at once; more wait in a queue.
    #[arg(long, env = "HEDDLE_MAX_RUNS", default_value_t = 8)]
    pub max_runs: usize,

    /// What this server does: everything (`all`), only pages, the API and
    /// websockets (`web`: the runs it is asked for are queued for the
    /// others), or only runs (`worker`: it serves no HTTP). `web` and
    /// `worker` need PostgreSQL.
    #[arg(long, value_enum, env = "HEDDLE_ROLE", default_value = "all")]
    pub role: ServerRole,

    /// How many runs one user may have queued or running at once.
    #[arg(long, env = "HEDDLE_MAX_RUNS_PER_USER", default_value_t = 4)]
    pub max_runs_per_user: usize,

    /// How many runs one account may have queued or running at once,
    /// however they started: its own, and those of its API keys, webhooks,
    /// schedules and widgets (whose own limits sit inside this one).
    #[arg(long, env = "HEDDLE_MAX_RUNS_PER_OWNER", default_value_t = crate::runs::DEFAULT_MAX_PER_OWNER as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_runs_per_owner: u64,

    /// Ceiling on a run's steps: a graph's `limits.max_steps` may be lower,
    /// never higher.
    #[arg(long, env = "HEDDLE_MAX_STEPS_PER_RUN", default_value_t = 10_000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps_per_run: u32,

    /// Ceiling on the items one fan-out starts: a node's `max_items` may be
    /// lower, never higher.
    #[arg(long, env = "HEDDLE_MAX_FAN_OUT_ITEMS", default_value_t = 1_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_fan_out_items: u64,

    /// Ceiling on how long a run may be active, in seconds, over all its
    /// executions (time paused or queued does not count); 0 for none.
    #[arg(long, env = "HEDDLE_MAX_RUN_ACTIVE_SECS", default_value_t = 1_800)]
    pub max_run_active_secs: u64,

    /// How many model calls may be in flight at once on this server, over
    /// every run (agents and sub-agents included); more wait their turn.
    #[arg(long, env = "HEDDLE_MAX_MODEL_CALLS", default_value_t = 32,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_model_calls: u64,

    /// Who may create an account: anyone (`open`), or (`closed`) only the
    /// first visitor and people holding a share link.
    #[arg(long, value_enum, env = "HEDDLE_SIGNUP", default_value = "open")]
    pub signup: SignupArg,

    /// The URL browsers use to reach Heddle when it is behind a proxy
    /// (`https://heddle.example.com`): https makes cookies Secure, and
    /// requests from it count as same-origin.
    #[arg(long, env = "HEDDLE_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Host names browsers may use to reach the server, besides IP
    /// addresses, `localhost` and the public URL's host (comma-separated):
    /// requests naming any other host are refused, so a page on another
    /// domain cannot reach the server by rebinding its name (DNS rebinding).
    #[arg(long, env = "HEDDLE_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// Behind a proxy: take each request's client address (for log-in
    /// rate limits) from the last `X-Forwarded-For` entry the proxy adds.
    /// Only set it when every request passes through that proxy.
    #[arg(long, env = "HEDDLE_TRUST_PROXY", default_value_t = false)]
    pub trust_proxy: bool,

    /// A token that lets Prometheus scrape `/metrics` (sent as
    /// `Authorization: Bearer <token>`); without one, `/metrics` is off.
    #[arg(long, env = "HEDDLE_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,

    /// How long, in seconds, a run stays with this server if the server
    /// stops renewing its lease (it died): then another server on the same
    /// PostgreSQL database takes the run over from its newest checkpoint.
    #[arg(long, env = "HEDDLE_LEASE_SECONDS", default_value_t = 15.0)]
    pub lease_seconds: f64,

    /// How deeply a run's values may nest (inputs, webhook bodies, node
    /// updates, script results): 1 to 100.
    #[arg(long, env = "HEDDLE_MAX_VALUE_DEPTH", default_value_t = heddle_engine::state::DEFAULT_MAX_DEPTH as u64,
          value_parser = clap::value_parser!(u64).range(1..=100))]
    pub max_value_depth: u64,

    /// How large one value of a run may be, in bytes of JSON (a channel's
    /// value, an update, a script's result); at least 1024.
    #[arg(long, env = "HEDDLE_MAX_VALUE_BYTES", default_value_t = heddle_engine::state::DEFAULT_MAX_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(1024..=(1 << 30)))]
    pub max_value_bytes: u64,

    #[command(flatten)]
    pub retention: RetentionArgs,

    /// How often, in minutes, this server prunes by the retention policy
    /// (0: never; `heddle prune` does it on demand). The first time is
    /// one period after it starts.
    #[arg(long, env = "HEDDLE_PRUNE_EVERY_MINS", default_value_t = 60)]
    pub prune_every_mins: u64,

    /// The shortest time, in seconds, between two firings of a schedule:
    /// a cron that fires more often is refused when it is saved.
    #[arg(long, env = "HEDDLE_SCHEDULE_MIN_SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(i64).range(1..))]
    pub schedule_min_seconds: i64,

    /// Threads that run graphs' `script` nodes (default: half the cores).
    #[arg(long, env = "HEDDLE_SCRIPT_THREADS")]
    pub script_threads: Option<usize>,

    /// The file holding the key that encrypts secrets at rest; created
    /// (mode 0600) on first start. Default: `heddle.key` beside the
    /// database file. `HEDDLE_SECRET_KEY` (64 hex digits) overrides it.
    #[arg(long, env = "HEDDLE_KEY_FILE")]
    pub key_file: Option<PathBuf>,

    /// The key itself (64 hex digits), instead of the key file. Only from
    /// the environment, so it never shows in a process list.
    #[arg(skip = std::env::var("HEDDLE_SECRET_KEY").ok().filter(|key| !key.trim().is_empty()))]
    pub secret_key: Option<String>,
}

impl ServeArgs {
    /// The most any graph this server runs may ask for.
    pub fn ceilings(&self) -> heddle_engine::Ceilings {
        heddle_engine::Ceilings {
            max_steps: Some(self.max_steps_per_run),
            max_fan_out_items: Some(usize::try_from(self.max_fan_out_items).unwrap_or(usize::MAX)),
            model_calls: Some(heddle_engine::model::ModelGate::new(
                usize::try_from(self.max_model_calls).unwrap_or(usize::MAX),
            )),
        }
    }
}

/// `--role`: what one server of several does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServerRole {
    /// Serves pages, the API and websockets, and executes runs.
    All,
    /// Serves pages, the API and websockets; executes nothing.
    Web,
    /// Executes runs; serves no HTTP.
    Worker,
}

impl ServerRole {
    /// Whether it executes runs.
    pub fn executes(self) -> bool {
        self != ServerRole::Web
    }

    /// Whether it serves HTTP.
    pub fn serves(self) -> bool {
        self != ServerRole::Worker
    }
}

/// `--signup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SignupArg {
    Open,
    Closed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_subcommand_means_serve_with_defaults() {
        let Command::Serve(args) = Cli::parse_from(["heddle"]).command() else {
            panic!("not serve")
        };
        assert_eq!(args.port, 3000);
        assert_eq!(args.host.to_string(), "127.0.0.1");
        assert_eq!(args.signup, SignupArg::Open);
        assert_eq!(args.public_url, None);
    }

    #[test]
    fn flags_change_host_and_port() {
        let cli = Cli::parse_from(["heddle", "serve", "--host", "0.0.0.0", "--port", "8080"]);
        let Command::Serve(args) = cli.command() else {
            panic!("not serve")
        };
        assert_eq!(args.port, 8080);
        assert_eq!(args.host.to_string(), "0.0.0.0");
    }

    #[test]
    fn serve_flags_work_without_the_subcommand() {
        let Command::Serve(args) = Cli::parse_from(["heddle", "--port", "8081"]).command() else {
            panic!("not serve")
        };
        assert_eq!(args.port, 8081);
    }

    #[test]
    fn run_takes_a_file_and_options() {
        let cli = Cli::parse_from([
            "heddle", "run", "g.json", "--input", "{}", "--thread", "t1", "--pretty",
        ]);
        let Command::Run(args) = cli.command() else {
            panic!("not a run")
        };
        assert_eq!(args.graph.to_str(), Some("g.json"));
        assert_eq!(args.thread.as_deref(), Some("t1"));
        assert!(args.output.pretty);
        assert_eq!(args.db.db.to_str(), Some("data/heddle.db"));
    }

    #[test]
    fn a_bad_port_is_a_usage_error() {
        assert!(Cli::try_parse_from(["heddle", "serve", "--port", "70000"]).is_err());
    }
}
