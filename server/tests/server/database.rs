//! Opening the database: creation, migrations, the schema's own checks,
//! and clear errors, on whichever database this pass runs on (SQLite, or
//! PostgreSQL under `HEDDLE_TEST_POSTGRES`), plus what only SQLite has (a
//! file and its directory).

use heddle_store::db::Db;
use heddle_store::db::open::{self as db, DbError};
use heddle_store::on_db;

use crate::support::{empty_test_database, on_postgres, test_database};

#[tokio::test]
async fn the_database_is_migrated_once_with_the_engine_tables_beside() {
    let dir = tempfile::tempdir().unwrap();
    let url = empty_test_database(dir.path()).await;
    let database = db::connect(&url).await.unwrap();
    assert_eq!(matches!(database, Db::Postgres(_)), on_postgres());
    database.close().await;

    // Opening it again applies nothing twice; the engine's checkpoint
    // tables share the database, with migrations of their own.
    let database = db::connect(&url).await.unwrap();
    let applied: Vec<i64> = on_db!(&database, pool => sqlx::query_scalar(
        "SELECT version FROM _sqlx_migrations ORDER BY version"
    )
    .fetch_all(pool)
    .await)
    .unwrap();
    // The app's migrations, 1 to N, once each.
    let ours = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../store/migrations/sqlite"
    ))
    .unwrap()
    .count();
    assert!(ours >= 6, "{ours} migrations");
    assert_eq!(applied[..ours], (1..=ours as i64).collect::<Vec<_>>()[..]);
    assert!(
        applied[ours..].iter().all(|version| *version > 1000),
        "{applied:?}"
    );
    assert!(applied.contains(&1001), "{applied:?}");
}

#[tokio::test]
async fn a_sqlite_database_and_its_directory_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/data/heddle.db");
    let database = db::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    assert!(path.is_file());
    assert!(matches!(database, Db::Sqlite(_)));
}

#[tokio::test]
async fn the_schema_refuses_broken_rows() {
    let dir = tempfile::tempdir().unwrap();
    let database = db::connect(&test_database(dir.path()).await).await.unwrap();
    let insert = |id: &'static str, name: &'static str, json: &'static str| {
        let database = database.clone();
        async move {
            on_db!(&database, pool => sqlx::query(
                "INSERT INTO graphs (id, name, graph_json) VALUES ($1, $2, $3)"
            )
            .bind(id)
            .bind(name)
            .bind(json)
            .execute(pool)
            .await
            .map(|_| ()))
        }
    };
    assert!(insert("a", "n", "{oops").await.is_err(), "not JSON");
    assert!(insert("b", "", "{}").await.is_err(), "no name");
    assert!(insert("c", "n", "{}").await.is_ok(), "a good row");
}

#[tokio::test]
async fn other_databases_are_refused_without_leaking_passwords() {
    let error = db::connect("mysql://heddle:hunter2@localhost/heddle")
        .await
        .unwrap_err();
    assert!(matches!(error, DbError::Unsupported { .. }));
    let message = error.to_string();
    assert!(!message.contains("hunter2"), "{message}");
    assert!(message.contains("sqlite:"), "{message}");
    assert!(message.contains("postgres:"), "{message}");
}

#[tokio::test]
async fn an_unreachable_postgres_server_is_named_without_its_password() {
    // Port 1 on loopback: nothing listens there.
    let error = db::connect("postgres://heddle:hunter2@127.0.0.1:1/heddle")
        .await
        .unwrap_err();
    assert!(matches!(error, DbError::Connect { .. }), "{error:?}");
    let message = error.to_string();
    assert!(!message.contains("hunter2"), "{message}");
    assert!(message.contains("127.0.0.1:1/heddle"), "{message}");
}

#[tokio::test]
async fn a_data_directory_that_cannot_exist_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let url = format!("sqlite://{}/data/heddle.db", file.display());
    let error = db::connect(&url).await.unwrap_err();
    assert!(matches!(error, DbError::DataDir { .. }), "{error:?}");
    assert!(error.to_string().contains("a-file/data"), "{error}");
}
