//! Opening the database: SQLite or PostgreSQL by the URL's scheme. Parse
//! the URL, make the data directory (SQLite), connect, and bring the
//! schema up to date with the migrations embedded in the binary (the
//! store crate's migrations/sqlite/ or migrations/postgres/, then the
//! engine's checkpoint tables).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use super::Db;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};

/// Where the database lives unless DATABASE_URL says otherwise.
pub const DEFAULT_URL: &str = "sqlite://data/heddle.db";

/// Why the database could not be opened. Each message is one line that
/// names the URL or path at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    /// The URL is for a database Heddle does not support (yet).
    #[error(
        "DATABASE_URL `{url}` is not supported: use a sqlite: URL (e.g. {DEFAULT_URL}) or a postgres: one (postgres://user:password@host/database)"
    )]
    Unsupported { url: String },
    /// The URL could not be parsed.
    #[error("DATABASE_URL `{url}` is not a valid database URL: {source}")]
    InvalidUrl {
        url: String,
        #[source]
        source: sqlx::Error,
    },
    /// The directory for the database file could not be created.
    #[error("cannot create the data directory {}: {source}", path.display())]
    DataDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// SQLite could not open or create the file.
    #[error("cannot open the database {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: sqlx::Error,
    },
    /// Another `heddle serve` already serves this SQLite file.
    #[error(
        "another Heddle server is serving {}: SQLite serves one server at a time (the command line's `heddle run` may share it); to run several servers, use PostgreSQL (the README says how)",
        path.display()
    )]
    InUse { path: PathBuf },
    /// The lock file beside the SQLite file could not be made.
    #[error("cannot lock {}: {source}", path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The PostgreSQL server could not be reached or refused the log-in.
    #[error("cannot connect to the database `{url}`: {source}")]
    Connect {
        url: String,
        #[source]
        source: sqlx::Error,
    },
    /// The schema could not be brought up to date.
    #[error("cannot apply the database migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The run store's tables could not be created.
    #[error("{0}")]
    Store(heddle_engine::run::StoreError),
    /// Older rows could not be brought up to the new schema.
    #[error("cannot update older accounts: {0}")]
    Backfill(heddle_wire::error::AppError),
}

/// Opens the database at `url` (creating a SQLite file if needed) and
/// applies the migrations.
pub async fn connect(url: &str) -> Result<Db, DbError> {
    let db = if url.starts_with("sqlite:") {
        Db::Sqlite(open_sqlite(url).await?)
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Db::Postgres(open_postgres(url).await?)
    } else {
        return Err(DbError::Unsupported { url: redact(url) });
    };
    migrate(&db).await?;
    crate::accounts::fill_username_keys(&db)
        .await
        .map_err(DbError::Backfill)?;
    Ok(db)
}

async fn open_sqlite(url: &str) -> Result<sqlx::SqlitePool, DbError> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|source| DbError::InvalidUrl {
            url: redact(url),
            source,
        })?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(5));

    let path = options.get_filename().to_path_buf();
    if let Some(dir) = data_dir(&path) {
        std::fs::create_dir_all(dir).map_err(|source| DbError::DataDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(options)
        .await
        .map_err(|source| DbError::Open { path, source })
}

async fn open_postgres(url: &str) -> Result<sqlx::PgPool, DbError> {
    let options = PgConnectOptions::from_str(url).map_err(|source| DbError::InvalidUrl {
        url: redact(url),
        source,
    })?;
    PgPoolOptions::new()
        .max_connections(16)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .map_err(|source| DbError::Connect {
            url: redact(url),
            source,
        })
}

/// Brings the schema up to date: the app's migrations, then the engine's
/// checkpoint tables (versions from 1001) in the same database; each
/// migrator ignores the other's versions.
async fn migrate(db: &Db) -> Result<(), DbError> {
    match db {
        Db::Sqlite(pool) => {
            let mut migrator = sqlx::migrate!("./migrations/sqlite");
            migrator.set_ignore_missing(true);
            migrator.run(pool).await?;
            heddle_engine::run::sqlite::migrate(pool)
                .await
                .map_err(DbError::Store)
        }
        Db::Postgres(pool) => {
            let mut migrator = sqlx::migrate!("./migrations/postgres");
            migrator.set_ignore_missing(true);
            migrator.run(pool).await?;
            heddle_engine::run::postgres::migrate(pool)
                .await
                .map_err(DbError::Store)
        }
    }
}

/// Claims a SQLite database for this server: a second `heddle serve` on
/// the same file is refused at start, saying why, instead of two servers
/// each queueing and recovering the same runs. The claim is an exclusive
/// lock on `<file>.serve.lock`, held by the returned file for as long as the
/// server runs (the kernel drops it when the process ends, however it
/// ends). PostgreSQL and in-memory databases need no claim (`None`).
pub fn claim(url: &str) -> Result<Option<std::fs::File>, DbError> {
    if !url.starts_with("sqlite:") {
        return Ok(None);
    }
    let Ok(options) = SqliteConnectOptions::from_str(url) else {
        return Ok(None); // `connect` reports the bad URL
    };
    let database = options.get_filename().to_path_buf();
    if database.as_os_str() == ":memory:" {
        return Ok(None);
    }
    if let Some(dir) = data_dir(&database) {
        std::fs::create_dir_all(dir).map_err(|source| DbError::DataDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let mut name = database.clone().into_os_string();
    name.push(".serve.lock");
    let path = PathBuf::from(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| DbError::Lock {
            path: path.clone(),
            source,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(DbError::InUse { path: database }),
        Err(std::fs::TryLockError::Error(source)) => Err(DbError::Lock { path, source }),
    }
}

/// Where the secret key lives by default: beside the database file
/// (`data/heddle.key` for the default database), `heddle.key` in the
/// working directory for a database in memory, and `data/heddle.key` for
/// PostgreSQL (replicas sharing one database must share one key: set
/// `HEDDLE_SECRET_KEY` on each).
pub fn default_key_file(url: &str) -> PathBuf {
    if !url.starts_with("sqlite:") {
        return PathBuf::from("data/heddle.key");
    }
    let file = SqliteConnectOptions::from_str(url)
        .ok()
        .map(|options| options.get_filename().to_path_buf());
    match file.as_deref().and_then(data_dir) {
        Some(dir) => dir.join("heddle.key"),
        None => PathBuf::from("heddle.key"),
    }
}

/// The directory a database file needs, if it is a file on disk.
fn data_dir(path: &Path) -> Option<&Path> {
    if path.as_os_str() == ":memory:" {
        return None;
    }
    path.parent().filter(|dir| !dir.as_os_str().is_empty())
}

/// A URL fit for a message or a log: any password in it is hidden.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!("{}://…@{}", &url[..scheme_end], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("postgres://heddle:secret@db:5432/heddle"),
            "postgres://…@db:5432/heddle"
        );
        assert_eq!(redact("sqlite://data/heddle.db"), "sqlite://data/heddle.db");
    }

    #[test]
    fn memory_databases_need_no_directory() {
        assert_eq!(data_dir(Path::new(":memory:")), None);
        assert_eq!(data_dir(Path::new("heddle.db")), None);
        assert_eq!(
            data_dir(Path::new("data/heddle.db")),
            Some(Path::new("data"))
        );
    }
}
