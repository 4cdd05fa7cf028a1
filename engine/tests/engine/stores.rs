//! The checkpoint stores the durable-run and conformance tests run
//! against, each fresh: the memory store, the SQLite one (feature
//! `sqlite`, in a temporary file) and the PostgreSQL one (feature
//! `postgres`, in a database of its own on the server that
//! `HEDDLE_TEST_POSTGRES` names).
//!
//! Without `HEDDLE_TEST_POSTGRES` the PostgreSQL store is skipped, and
//! one line on stderr says so; with `HEDDLE_REQUIRE_POSTGRES=1` (as CI
//! sets) the tests fail instead, so that pass is never skipped silently.

use std::ops::Deref;
use std::sync::{Arc, Once};

use heddle_engine::run::{CheckpointStore, MemoryStore};

/// Where a store's data lives, so a second store can be opened on it.
#[derive(Debug, Clone)]
pub enum Location {
    #[cfg(feature = "sqlite")]
    Sqlite(std::path::PathBuf),
    #[cfg(feature = "postgres")]
    Postgres(String),
}

/// SQL against a database store's tables, as a test's own connection (each
/// test file adds the queries it needs).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub enum Sql {
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl Sql {
    pub async fn open(location: &Location) -> Sql {
        match location {
            #[cfg(feature = "sqlite")]
            Location::Sqlite(path) => Sql::Sqlite(
                sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
                    .await
                    .unwrap(),
            ),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Sql::Postgres(sqlx::PgPool::connect(url).await.unwrap()),
        }
    }
}

/// A fresh store for one test; what it stores goes with it.
pub struct TestStore {
    /// `memory`, `sqlite` or `postgres`, for messages.
    pub name: &'static str,
    pub store: Arc<dyn CheckpointStore>,
    /// Where a store of a database lives (not the memory store).
    pub location: Option<Location>,
    /// Declared after `store`, so the store is dropped first.
    _data: Option<Box<dyn Send>>,
    /// Handed to a test: a panic names this store.
    tested: bool,
}

impl TestStore {
    /// Another store on the same data, as a second process would open it
    /// (running the migrations again); `None` for the memory store.
    #[allow(dead_code)] // unused when no database store is built
    pub async fn reopen(&self) -> Option<Arc<dyn CheckpointStore>> {
        match self.location.clone()? {
            #[cfg(feature = "sqlite")]
            Location::Sqlite(path) => {
                use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
                let store = SqliteStore::open(path, SyncMode::Normal).await.unwrap();
                Some(store.shared())
            }
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => {
                use heddle_engine::run::postgres::PostgresStore;
                Some(PostgresStore::connect(&url).await.unwrap().shared())
            }
        }
    }
}

impl Deref for TestStore {
    type Target = Arc<dyn CheckpointStore>;

    fn deref(&self) -> &Self::Target {
        &self.store
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        if self.tested && std::thread::panicking() {
            eprintln!("(the failure above was with the {} store)", self.name);
        }
    }
}

/// The stores of [`stores`], handed out one by one.
pub struct Stores(std::vec::IntoIter<TestStore>);

impl Iterator for Stores {
    type Item = TestStore;

    fn next(&mut self) -> Option<TestStore> {
        // Only the store under test names itself when a test fails, not
        // those after it, dropped unused by the same panic.
        let mut store = self.0.next()?;
        store.tested = true;
        Some(store)
    }
}

/// Every store, each fresh.
pub async fn stores() -> Stores {
    #[allow(unused_mut)] // only the memory store without the features
    let mut stores = vec![TestStore {
        name: "memory",
        store: Arc::new(MemoryStore::new()),
        location: None,
        _data: None,
        tested: false,
    }];
    #[cfg(feature = "sqlite")]
    {
        use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let store = SqliteStore::open(&path, SyncMode::Normal).await.unwrap();
        stores.push(TestStore {
            name: "sqlite",
            store: store.shared(),
            location: Some(Location::Sqlite(path)),
            _data: Some(Box::new(dir)),
            tested: false,
        });
    }
    #[cfg(feature = "postgres")]
    if let Some(database) = postgres::TestDatabase::create().await {
        use heddle_engine::run::postgres::PostgresStore;
        let store = PostgresStore::connect(&database.url).await.unwrap();
        stores.push(TestStore {
            name: "postgres",
            store: store.shared(),
            location: Some(Location::Postgres(database.url.clone())),
            _data: Some(Box::new(database)),
            tested: false,
        });
    }
    #[cfg(not(feature = "postgres"))]
    skip_postgres("the tests were built without the `postgres` feature");
    Stores(stores.into_iter())
}

/// Whether CI asked for the PostgreSQL pass to be required.
fn postgres_required() -> bool {
    std::env::var("HEDDLE_REQUIRE_POSTGRES").is_ok_and(|value| value == "1")
}

/// Skips the PostgreSQL store, saying so once per test binary, or fails
/// when it is required.
fn skip_postgres(why: &str) {
    if postgres_required() {
        panic!("HEDDLE_REQUIRE_POSTGRES=1, but the PostgreSQL store cannot be tested: {why}");
    }
    static NOTICE: Once = Once::new();
    NOTICE.call_once(|| {
        use std::io::Write;
        // Straight to stderr: the test harness captures `eprintln!`.
        let _ = writeln!(
            std::io::stderr(),
            "note: the PostgreSQL checkpoint store is NOT tested: {why}"
        );
    });
}

#[cfg(feature = "postgres")]
pub mod postgres {
    //! A database of its own on the test server for each store.

    use std::hash::{BuildHasher, RandomState};
    use std::sync::atomic::{AtomicU64, Ordering};

    use sqlx::{AssertSqlSafe, Connection, PgConnection};

    /// A database created for one store, dropped with this.
    pub struct TestDatabase {
        admin_url: String,
        name: String,
        /// The database's URL.
        pub url: String,
    }

    impl TestDatabase {
        /// A new, empty database on the server `HEDDLE_TEST_POSTGRES`
        /// names; `None` (after saying so) when it is not set.
        pub async fn create() -> Option<TestDatabase> {
            let admin_url = match std::env::var("HEDDLE_TEST_POSTGRES") {
                Ok(url) if !url.trim().is_empty() => url,
                _ => {
                    super::skip_postgres(
                        "HEDDLE_TEST_POSTGRES is not set (set it to a server URL where the \
                         user may CREATE DATABASE, e.g. \
                         postgres://heddle:heddle@127.0.0.1:5432/postgres)",
                    );
                    return None;
                }
            };
            let name = format!("heddle_test_{}", random_hex());
            let mut admin = PgConnection::connect(&admin_url)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to HEDDLE_TEST_POSTGRES: {e}"));
            sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
                .execute(&mut admin)
                .await
                .unwrap_or_else(|e| panic!("cannot create the test database {name}: {e}"));
            let _ = admin.close().await;
            Some(TestDatabase {
                url: with_database(&admin_url, &name),
                admin_url,
                name,
            })
        }
    }

    impl Drop for TestDatabase {
        /// Drops the database, on a thread of its own (this may run inside
        /// the test's runtime, which cannot be blocked on). `FORCE` ends
        /// connections a pool still holds.
        fn drop(&mut self) {
            let admin_url = self.admin_url.clone();
            let sql = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
            let dropped = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                runtime.block_on(async {
                    let mut admin = PgConnection::connect(&admin_url)
                        .await
                        .map_err(|e| e.to_string())?;
                    sqlx::query(AssertSqlSafe(sql))
                        .execute(&mut admin)
                        .await
                        .map_err(|e| e.to_string())?;
                    let _ = admin.close().await;
                    Ok::<(), String>(())
                })
            })
            .join();
            if !matches!(dropped, Ok(Ok(()))) {
                eprintln!("warning: test database {} was not dropped", self.name);
            }
        }
    }

    /// `url` with its database replaced by `name`.
    fn with_database(url: &str, name: &str) -> String {
        let (base, query) = match url.split_once('?') {
            Some((base, query)) => (base, format!("?{query}")),
            None => (url, String::new()),
        };
        let host_start = base.find("://").map_or(0, |i| i + 3);
        let host_end = base[host_start..]
            .find('/')
            .map_or(base.len(), |i| host_start + i);
        format!("{}/{name}{query}", &base[..host_end])
    }

    fn random_hex() -> String {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let hash = RandomState::new().hash_one((std::process::id(), n));
        format!("{hash:016x}")
    }

    #[test]
    fn a_url_gets_the_test_database() {
        assert_eq!(
            with_database("postgres://u:p@h:5432/postgres", "x"),
            "postgres://u:p@h:5432/x"
        );
        assert_eq!(with_database("postgres://h", "x"), "postgres://h/x");
        assert_eq!(
            with_database("postgres://h/db?sslmode=disable", "x"),
            "postgres://h/x?sslmode=disable"
        );
    }
}
