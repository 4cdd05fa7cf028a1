//! Opening the database: creation, migrations, and clear errors.

use heddle_server::db::{self, DbError};

#[tokio::test]
async fn the_database_and_its_directory_are_created_and_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/data/heddle.db");
    let url = format!("sqlite://{}", path.display());
    let pool = db::connect(&url).await.unwrap();
    assert!(path.is_file());
    let columns: Vec<String> =
        sqlx::query_scalar("SELECT name FROM pragma_table_info('graphs') ORDER BY cid")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        columns,
        [
            "id",
            "name",
            "graph_json",
            "version",
            "created_at",
            "updated_at",
            "owner_id"
        ]
    );
    pool.close().await;

    // Opening it again applies nothing twice; the engine's checkpoint
    // tables share the file, with migrations of their own.
    let pool = db::connect(&url).await.unwrap();
    let applied: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(applied, [1, 2, 3, 4, 1001]);
}

#[tokio::test]
async fn the_schema_refuses_broken_rows() {
    let dir = tempfile::tempdir().unwrap();
    let pool = db::connect(&format!("sqlite://{}", dir.path().join("h.db").display()))
        .await
        .unwrap();
    let not_json =
        sqlx::query("INSERT INTO graphs (id, name, graph_json) VALUES ('a', 'n', '{oops')")
            .execute(&pool)
            .await;
    assert!(not_json.is_err());
    let no_name = sqlx::query("INSERT INTO graphs (id, name, graph_json) VALUES ('b', '', '{}')")
        .execute(&pool)
        .await;
    assert!(no_name.is_err());
}

#[tokio::test]
async fn other_databases_are_refused_without_leaking_passwords() {
    let error = db::connect("postgres://heddle:hunter2@localhost/heddle")
        .await
        .unwrap_err();
    assert!(matches!(error, DbError::Unsupported { .. }));
    let message = error.to_string();
    assert!(!message.contains("hunter2"), "{message}");
    assert!(message.contains("sqlite:"), "{message}");
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
