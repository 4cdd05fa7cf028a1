//! The `datasets` and `dataset_examples` tables: a graph's evaluation
//! examples, versioned. A change takes the dataset's row first (its
//! `version` goes up by one), so two changes at once are two versions,
//! never one lost; an example is added in a version and removed in a
//! later one, never changed in place, so any version reads back as it was.

use heddle_engine::RunId;
use serde_json::{Map, Value};

use crate::access::{Allowed, OnRun};
use crate::db::{Db, WritePool};
use crate::on_db;
use crate::runs::RunControl;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::datasets::{
    Dataset, DatasetVersion, Example, ExampleInput, FromRun, MAX_DATASET_BYTES,
    MAX_DATASETS_PER_GRAPH, MAX_EXAMPLES, MAX_EXAMPLES_PER_REQUEST, MAX_KEPT_EXAMPLES, MAX_PAGE,
    NewDataset, example_problem,
};
use heddle_wire::graphs::GraphId;

#[derive(sqlx::FromRow)]
struct DatasetRow {
    id: String,
    graph_id: String,
    name: String,
    version: i64,
    examples: i64,
    maker: Option<String>,
    created_at: String,
    updated_at: String,
}

/// `SELECT <the dataset columns> FROM datasets d <rest>`, as one literal:
/// the latest version's example count with it.
macro_rules! select_datasets {
    ($rest:literal) => {
        concat!(
            "SELECT d.id, d.graph_id, d.name, d.version, ",
            "(SELECT COUNT(*) FROM dataset_examples e WHERE e.dataset_id = d.id ",
            "AND e.removed_in IS NULL) AS examples, ",
            "(SELECT username FROM users u WHERE u.id = d.created_by) AS maker, ",
            "d.created_at, d.updated_at FROM datasets d ",
            $rest
        )
    };
}

impl From<DatasetRow> for Dataset {
    fn from(row: DatasetRow) -> Self {
        Dataset {
            id: row.id,
            graph_id: GraphId::from_stored(row.graph_id),
            name: row.name,
            version: row.version,
            examples: row.examples,
            created_by: row.maker,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(sqlx::FromRow)]
struct ExampleRow {
    id: String,
    label: Option<String>,
    input: String,
    reference: Option<String>,
    source_run: Option<String>,
    added_in: i64,
}

impl ExampleRow {
    fn into_example(self) -> Result<Example, AppError> {
        let broken = |what: &str| {
            tracing::error!(example = %self.id, "a stored example's {what} does not read back");
            AppError::Internal
        };
        let input: Map<String, Value> =
            serde_json::from_str(&self.input).map_err(|_| broken("input"))?;
        let reference = self
            .reference
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|_| broken("reference"))?;
        Ok(Example {
            id: self.id,
            label: self.label,
            input,
            reference,
            source_run: self.source_run.map(RunId::from),
            added_in: self.added_in,
        })
    }
}

/// The graph's datasets, by name.
pub async fn list(db: &Db, allowed: &Allowed) -> Result<Vec<Dataset>, AppError> {
    let rows: Vec<DatasetRow> = on_db!(db, pool => sqlx::query_as(select_datasets!(
        "WHERE d.graph_id = $1 ORDER BY d.name, d.id"
    ))
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await)?;
    Ok(rows.into_iter().map(Dataset::from).collect())
}

/// One of the graph's datasets.
pub async fn get(db: &Db, allowed: &Allowed, id: &str) -> Result<Dataset, AppError> {
    let row: Option<DatasetRow> = on_db!(db, pool => sqlx::query_as(select_datasets!(
        "WHERE d.graph_id = $1 AND d.id = $2"
    ))
    .bind(allowed.graph().as_str())
    .bind(id)
    .fetch_optional(pool)
    .await)?;
    row.map(Dataset::from)
        .ok_or_else(|| AppError::not_found(format!("dataset {id}")))
}

fn check_name(name: &str) -> Result<&str, AppError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
        return Err(AppError::InvalidInput(
            "`name`: a dataset's name is 1 to 64 characters, none of them control characters"
                .into(),
        ));
    }
    Ok(name)
}

/// Makes an empty dataset (version 0) for the graph (editors).
pub async fn create(db: &Db, allowed: &Allowed, new: NewDataset) -> Result<Dataset, AppError> {
    allowed.at_least(Role::Editor)?;
    let name = check_name(&new.name)?;
    let id = uuid::Uuid::new_v4().to_string();
    let now = crate::db::now();
    let graph = allowed.graph().as_str();
    let made: Result<(), AppError> = on_db!(db, pool => {
        let mut tx = pool.begin_write(&format!("datasets:{graph}")).await?;
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM datasets WHERE graph_id = $1")
            .bind(graph)
            .fetch_one(&mut *tx)
            .await?;
        if count >= MAX_DATASETS_PER_GRAPH as i64 {
            return Err(AppError::InvalidInput(format!(
                "a graph holds at most {MAX_DATASETS_PER_GRAPH} datasets; delete one first"
            )));
        }
        let taken: Option<String> =
            sqlx::query_scalar("SELECT id FROM datasets WHERE graph_id = $1 AND name = $2")
                .bind(graph)
                .bind(name)
                .fetch_optional(&mut *tx)
                .await?;
        if taken.is_some() {
            return Err(AppError::InvalidInput(format!(
                "`name`: this graph already has a dataset named `{name}`"
            )));
        }
        sqlx::query(
            "INSERT INTO datasets (id, graph_id, name, version, created_by, created_at, updated_at)
             VALUES ($1, $2, $3, 0, $4, $5, $5)",
        )
        .bind(&id)
        .bind(graph)
        .bind(name)
        .bind(allowed.user().id.as_str())
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    });
    made?;
    tracing::info!(dataset = %id, graph = %allowed.graph(), "dataset made");
    get(db, allowed, &id).await
}

/// Renames a dataset (editors); its versions stay as they are.
pub async fn rename(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    new: NewDataset,
) -> Result<Dataset, AppError> {
    allowed.at_least(Role::Editor)?;
    let name = check_name(&new.name)?;
    get(db, allowed, id).await?;
    let renamed = on_db!(db, pool => sqlx::query(
        "UPDATE datasets SET name = $1, updated_at = $2 WHERE id = $3 AND graph_id = $4",
    )
    .bind(name)
    .bind(crate::db::now())
    .bind(id)
    .bind(allowed.graph().as_str())
    .execute(pool)
    .await
    .map(|_| ()));
    match renamed {
        Ok(()) => get(db, allowed, id).await,
        Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
            Err(AppError::InvalidInput(format!(
                "`name`: this graph already has a dataset named `{name}`"
            )))
        }
        Err(error) => Err(error.into()),
    }
}

/// Deletes a dataset and every version of it (editors); refused while
/// experiments name it.
pub async fn delete(db: &Db, allowed: &Allowed, id: &str) -> Result<(), AppError> {
    allowed.at_least(Role::Editor)?;
    let dataset = get(db, allowed, id).await?;
    let deleted = on_db!(db, pool => sqlx::query("DELETE FROM datasets WHERE id = $1 AND graph_id = $2")
        .bind(id)
        .bind(allowed.graph().as_str())
        .execute(pool)
        .await
        .map(|_| ()));
    match deleted {
        Ok(()) => {}
        // Experiments name it (the key does not cascade): their results
        // are not deleted behind anyone's back.
        Err(sqlx::Error::Database(error)) if error.is_foreign_key_violation() => {
            return Err(AppError::InvalidInput(format!(
                "dataset `{}` has experiments, or gates publishing; delete them (or the gate) \
                 first: their results would go with it",
                dataset.name
            )));
        }
        Err(error) => return Err(error.into()),
    }
    tracing::info!(dataset = %id, graph = %allowed.graph(), "dataset deleted");
    Ok(())
}

/// A version of a dataset (the latest when `version` is `None`), with
/// `limit` of its examples from `offset`.
pub async fn version(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    version: Option<i64>,
    offset: usize,
    limit: usize,
) -> Result<DatasetVersion, AppError> {
    let dataset = get(db, allowed, id).await?;
    let version = version.unwrap_or(dataset.version);
    if !(0..=dataset.version).contains(&version) {
        return Err(AppError::not_found(format!(
            "version {version} of dataset {id} (its versions are 0 to {})",
            dataset.version
        )));
    }
    let limit = limit.clamp(1, MAX_PAGE) as i64;
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    let (total, rows): (i64, Vec<ExampleRow>) = on_db!(db, pool => {
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM dataset_examples WHERE dataset_id = $1 AND added_in <= $2
               AND (removed_in IS NULL OR removed_in > $2)",
        )
        .bind(id)
        .bind(version)
        .fetch_one(pool)
        .await?;
        let rows = sqlx::query_as(
            "SELECT id, label, input, reference, source_run, added_in FROM dataset_examples
              WHERE dataset_id = $1 AND added_in <= $2 AND (removed_in IS NULL OR removed_in > $2)
              ORDER BY position, added_in LIMIT $3 OFFSET $4",
        )
        .bind(id)
        .bind(version)
        .bind(limit)
        .bind(offset)
        .fetch_all(pool)
        .await?;
        (total, rows)
    });
    Ok(DatasetVersion {
        dataset,
        version,
        total,
        examples: rows
            .into_iter()
            .map(ExampleRow::into_example)
            .collect::<Result<_, _>>()?,
    })
}

/// An example ready to store: checked, its JSON written.
struct Checked {
    label: Option<String>,
    input: String,
    reference: Option<String>,
    source_run: Option<String>,
}

impl Checked {
    /// Bytes of JSON it keeps (input and reference).
    fn bytes(&self) -> i64 {
        (self.input.len() + self.reference.as_ref().map_or(0, String::len)) as i64
    }
}

/// Checks examples as they enter: labels, and values as bounded as a
/// run's input (`examples[2].input: ...`).
fn check_examples(
    examples: Vec<(ExampleInput, Option<RunId>)>,
    field: &str,
) -> Result<Vec<Checked>, AppError> {
    examples
        .into_iter()
        .enumerate()
        .map(|(index, (example, source_run))| {
            let at = |part: &str| {
                if field.is_empty() {
                    part.to_string()
                } else {
                    format!("{field}[{index}].{part}")
                }
            };
            let label = example.label.map(|label| label.trim().to_string());
            let input = Value::Object(example.input);
            if let Some((part, message)) =
                example_problem(label.as_deref(), &input, example.reference.as_ref())
            {
                return Err(AppError::InvalidInput(format!("`{}`: {message}", at(part))));
            }
            Ok(Checked {
                label: label.filter(|label| !label.is_empty()),
                input: input.to_string(),
                reference: example.reference.as_ref().map(Value::to_string),
                source_run: source_run.map(|run| run.as_str().to_string()),
            })
        })
        .collect()
}

/// What one change of a dataset does to its examples.
enum Change {
    /// Adds these at the end.
    Add(Vec<Checked>),
    /// Puts this in the place of the example with this id.
    Replace(String, Checked),
    /// Removes the example with this id.
    Remove(String),
}

/// Adds examples at the end of a dataset: a new version (editors).
/// `examples` carry the run each was made from, if any.
pub async fn add(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    examples: Vec<(ExampleInput, Option<RunId>)>,
) -> Result<Dataset, AppError> {
    if examples.is_empty() || examples.len() > MAX_EXAMPLES_PER_REQUEST {
        return Err(AppError::InvalidInput(format!(
            "`examples`: 1 to {MAX_EXAMPLES_PER_REQUEST} at a time"
        )));
    }
    let checked = check_examples(examples, "examples")?;
    change(db, allowed, id, Change::Add(checked)).await
}

/// Puts `example` in the place of the example `example_id`: a new version
/// (editors); the versions before it keep the old one.
pub async fn replace(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    example_id: &str,
    example: ExampleInput,
) -> Result<Dataset, AppError> {
    let checked = check_examples(vec![(example, None)], "")?;
    let Some(checked) = checked.into_iter().next() else {
        return Err(AppError::Internal);
    };
    change(
        db,
        allowed,
        id,
        Change::Replace(example_id.to_string(), checked),
    )
    .await
}

/// Removes the example `example_id`: a new version (editors).
pub async fn remove(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    example_id: &str,
) -> Result<Dataset, AppError> {
    change(db, allowed, id, Change::Remove(example_id.to_string())).await
}

/// Makes one new version of the dataset with `what` done to it.
async fn change(db: &Db, allowed: &Allowed, id: &str, what: Change) -> Result<Dataset, AppError> {
    allowed.at_least(Role::Editor)?;
    let graph = allowed.graph().as_str();
    let now = crate::db::now();
    let changed: Result<DatasetRow, AppError> = on_db!(db, pool => {
        let mut tx = pool.begin_write(&format!("dataset:{id}")).await?;
        // Takes the dataset's row first: a change made at the same time
        // waits, then makes the next version.
        let version: Option<i64> = sqlx::query_scalar(
            "UPDATE datasets SET version = version + 1, updated_at = $1
              WHERE id = $2 AND graph_id = $3 RETURNING version",
        )
        .bind(&now)
        .bind(id)
        .bind(graph)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(version) = version else {
            return Err(AppError::not_found(format!("dataset {id}")));
        };
        let (current, kept, last, bytes): (i64, i64, Option<i64>, i64) = sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(CASE WHEN removed_in IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT),
                    COUNT(*), MAX(position),
                    CAST(COALESCE(SUM(LENGTH(input) + COALESCE(LENGTH(reference), 0)), 0) AS BIGINT)
               FROM dataset_examples WHERE dataset_id = $1",
        )
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
        let (added, position, added_bytes) = match &what {
            Change::Add(examples) => (
                examples.len() as i64,
                last.map_or(0, |last| last + 1),
                examples.iter().map(Checked::bytes).sum(),
            ),
            Change::Replace(_, example) => (1, 0, example.bytes()),
            Change::Remove(_) => (0, 0, 0),
        };
        if bytes + added_bytes > MAX_DATASET_BYTES {
            return Err(AppError::InvalidInput(format!(
                "this dataset keeps {bytes} bytes of examples over its versions, and keeps at \
                 most {MAX_DATASET_BYTES}: make a new dataset for more"
            )));
        }
        if matches!(what, Change::Add(_)) && current + added > MAX_EXAMPLES as i64 {
            return Err(AppError::InvalidInput(format!(
                "a dataset holds at most {MAX_EXAMPLES} examples; it has {current}"
            )));
        }
        if kept + added > MAX_KEPT_EXAMPLES as i64 {
            return Err(AppError::InvalidInput(format!(
                "this dataset has kept {kept} examples over its versions, and keeps at most \
                 {MAX_KEPT_EXAMPLES}: make a new dataset for more changes"
            )));
        }
        let insert = "INSERT INTO dataset_examples
             (id, dataset_id, position, label, input, reference, source_run, added_in)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
        match what {
            Change::Add(examples) => {
                for (offset, example) in examples.into_iter().enumerate() {
                    sqlx::query(insert)
                        .bind(uuid::Uuid::new_v4().to_string())
                        .bind(id)
                        .bind(position + offset as i64)
                        .bind(&example.label)
                        .bind(&example.input)
                        .bind(&example.reference)
                        .bind(&example.source_run)
                        .bind(version)
                        .execute(&mut *tx)
                        .await?;
                }
            }
            Change::Replace(example_id, example) => {
                let old: Option<(i64, Option<String>)> = sqlx::query_as(
                    "UPDATE dataset_examples SET removed_in = $1
                      WHERE id = $2 AND dataset_id = $3 AND removed_in IS NULL
                      RETURNING position, source_run",
                )
                .bind(version)
                .bind(&example_id)
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
                let Some((position, source_run)) = old else {
                    return Err(AppError::not_found(format!("example {example_id}")));
                };
                sqlx::query(insert)
                    .bind(uuid::Uuid::new_v4().to_string())
                    .bind(id)
                    .bind(position)
                    .bind(&example.label)
                    .bind(&example.input)
                    .bind(&example.reference)
                    .bind(source_run)
                    .bind(version)
                    .execute(&mut *tx)
                    .await?;
            }
            Change::Remove(example_id) => {
                let removed = sqlx::query(
                    "UPDATE dataset_examples SET removed_in = $1
                      WHERE id = $2 AND dataset_id = $3 AND removed_in IS NULL",
                )
                .bind(version)
                .bind(&example_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
                if removed.rows_affected() == 0 {
                    return Err(AppError::not_found(format!("example {example_id}")));
                }
            }
        }
        // Read before the commit: the dataset as this change left it,
        // whatever changes come after.
        let row: DatasetRow = sqlx::query_as(select_datasets!("WHERE d.id = $1"))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(row)
    });
    Ok(changed?.into())
}

/// Adds an example made of a finished run of the graph (editors): see
/// [`example_of_run`]. `run` is the caller's access to the run; a run of
/// another graph is as unknown here as one that does not exist.
pub async fn add_from_run(
    db: &Db,
    allowed: &Allowed,
    runs: &dyn RunControl,
    run: &OnRun,
    id: &str,
    from: FromRun,
) -> Result<Dataset, AppError> {
    allowed.at_least(Role::Editor)?;
    if run.allowed().graph() != allowed.graph() {
        return Err(AppError::not_found(format!("run {}", from.run_id)));
    }
    // Through the run manager: a finished run's output is read from its
    // last checkpoint.
    let info = runs.get(run).await?;
    let input = if from.with_conversation {
        with_conversation(&info.input, info.output.as_ref())
    } else {
        info.input.clone()
    };
    let example = example_of_run(
        &input,
        info.output.as_ref(),
        from.reference_channels.as_deref(),
        from.label,
    )?;
    add(db, allowed, id, vec![(example, Some(from.run_id))]).await
}

/// A turn's input with the conversation before it: each input channel
/// that the output holds as a list of messages becomes that list up to
/// and including its last user message (the turn's question, and all that
/// came before it in the thread); other channels stay as they were.
pub fn with_conversation(input: &Value, output: Option<&Value>) -> Value {
    let (Some(input), Some(output)) = (input.as_object(), output.and_then(Value::as_object)) else {
        return input.clone();
    };
    let mut whole = input.clone();
    for (channel, value) in whole.iter_mut() {
        let Some(messages) = output.get(channel).and_then(Value::as_array) else {
            continue;
        };
        let asked = messages
            .iter()
            .rposition(|message| message.get("role").and_then(Value::as_str) == Some("user"));
        if let Some(asked) = asked {
            *value = Value::Array(messages[..=asked].to_vec());
        }
    }
    Value::Object(whole)
}

/// What a finished run makes an example of: its input, and as the
/// reference the output's `channels` (all of them when `None`; for a
/// conversation without channels named, `{"answer": <the last message's
/// text>}`).
pub fn example_of_run(
    input: &Value,
    output: Option<&Value>,
    channels: Option<&[String]>,
    label: Option<String>,
) -> Result<ExampleInput, AppError> {
    let Some(input) = input.as_object() else {
        return Err(AppError::InvalidInput(
            "`run_id`: the run's input is not an object of channels".into(),
        ));
    };
    let Some(output) = output.and_then(Value::as_object) else {
        return Err(AppError::InvalidInput(
            "`run_id`: the run has no output yet (only a finished run makes an example)".into(),
        ));
    };
    let reference = match channels {
        Some(channels) => {
            let mut picked = Map::new();
            for channel in channels {
                let Some(value) = output.get(channel) else {
                    return Err(AppError::InvalidInput(format!(
                        "`reference_channels`: the run's output has no channel `{channel}`"
                    )));
                };
                picked.insert(channel.clone(), value.clone());
            }
            Value::Object(picked)
        }
        None => match output.get("messages").and_then(Value::as_array) {
            Some(messages) => {
                let last = messages
                    .last()
                    .and_then(|message| message.get("content"))
                    .cloned()
                    .unwrap_or(Value::Null);
                serde_json::json!({ "answer": last })
            }
            None => Value::Object(output.clone()),
        },
    };
    Ok(ExampleInput {
        input: input.clone(),
        reference: Some(reference),
        label,
    })
}
