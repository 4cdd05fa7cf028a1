//! The `publish_gates` table: a graph's gate on publishing. A version
//! goes live only when its newest finished experiment on the gate's
//! dataset version scores, per scorer, no worse than the live version's
//! less that scorer's tolerance ([`check`], called by `publishing`).

use std::collections::BTreeMap;

use crate::access::Allowed;
use crate::db::Db;
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::experiments::{Experiment, NewPublishGate, PublishGate};

/// The most scorers a gate names a tolerance for.
pub const MAX_TOLERANCES: usize = 20;

#[derive(sqlx::FromRow)]
struct GateRow {
    dataset_id: String,
    dataset_name: Option<String>,
    dataset_version: i64,
    tolerances: String,
    tolerance: f64,
    maker: Option<String>,
    set_at: String,
}

/// The graph's gate, if it has one (viewers and up).
pub async fn get(db: &Db, allowed: &Allowed) -> Result<Option<PublishGate>, AppError> {
    let row: Option<GateRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT g.dataset_id, (SELECT name FROM datasets d WHERE d.id = g.dataset_id) AS dataset_name,
                g.dataset_version, g.tolerances, g.tolerance,
                (SELECT username FROM users u WHERE u.id = g.set_by) AS maker, g.set_at
           FROM publish_gates g WHERE g.graph_id = $1",
    )
    .bind(allowed.graph().as_str())
    .fetch_optional(pool)
    .await)?;
    Ok(row.map(|row| PublishGate {
        tolerances: serde_json::from_str(&row.tolerances).unwrap_or_default(),
        tolerance: row.tolerance,
        dataset_id: row.dataset_id,
        dataset_name: row.dataset_name,
        dataset_version: row.dataset_version,
        set_by: row.maker,
        set_at: row.set_at,
    }))
}

/// Sets the graph's gate (editors), in place of any it had.
pub async fn set(
    db: &Db,
    allowed: &Allowed,
    new: &NewPublishGate,
) -> Result<PublishGate, AppError> {
    allowed.at_least(Role::Editor)?;
    if allowed.trigger().is_some() {
        return Err(AppError::Forbidden(
            "an API key does not change what may be published; a person does".into(),
        ));
    }
    check_tolerances(&new.tolerances)?;
    if !new.tolerance.is_finite() || !(0.0..=1.0).contains(&new.tolerance) {
        return Err(AppError::InvalidInput("`tolerance`: from 0 to 1".into()));
    }
    let graph = allowed.graph().as_str();
    let dataset: Option<(String, i64)> = on_db!(db, pool => sqlx::query_as(
        "SELECT name, version FROM datasets WHERE id = $1 AND graph_id = $2",
    )
    .bind(&new.dataset_id)
    .bind(graph)
    .fetch_optional(pool)
    .await)?;
    let (_, version) = super::dataset_version(&new.dataset_id, dataset, new.dataset_version)?;
    let tolerances = serde_json::to_string(&new.tolerances).map_err(|_| AppError::Internal)?;
    on_db!(db, pool => sqlx::query(
        "INSERT INTO publish_gates (graph_id, dataset_id, dataset_version, tolerances, tolerance,
                                    set_by, set_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (graph_id) DO UPDATE
            SET dataset_id = excluded.dataset_id, dataset_version = excluded.dataset_version,
                tolerances = excluded.tolerances, tolerance = excluded.tolerance,
                set_by = excluded.set_by, set_at = excluded.set_at",
    )
    .bind(graph)
    .bind(&new.dataset_id)
    .bind(version)
    .bind(&tolerances)
    .bind(new.tolerance)
    .bind(allowed.user().id.as_str())
    .bind(crate::db::now())
    .execute(pool)
    .await
    .map(|_| ()))?;
    tracing::info!(graph, dataset = %new.dataset_id, version, "publishing gate set");
    get(db, allowed).await?.ok_or(AppError::Internal)
}

fn check_tolerances(tolerances: &BTreeMap<String, f64>) -> Result<(), AppError> {
    if tolerances.len() > MAX_TOLERANCES {
        return Err(AppError::InvalidInput(format!(
            "`tolerances`: at most {MAX_TOLERANCES} scorers"
        )));
    }
    for (name, tolerance) in tolerances {
        if name.is_empty() || name.chars().count() > 100 {
            return Err(AppError::InvalidInput(
                "`tolerances`: a scorer's name is 1 to 100 characters".into(),
            ));
        }
        if !tolerance.is_finite() || !(0.0..=1.0).contains(tolerance) {
            return Err(AppError::InvalidInput(format!(
                "`tolerances.{name}`: from 0 to 1"
            )));
        }
    }
    Ok(())
}

/// Removes the graph's gate (editors; nothing to do when it has none).
pub async fn remove(db: &Db, allowed: &Allowed) -> Result<(), AppError> {
    allowed.at_least(Role::Editor)?;
    if allowed.trigger().is_some() {
        return Err(AppError::Forbidden(
            "an API key does not change what may be published; a person does".into(),
        ));
    }
    on_db!(db, pool => sqlx::query("DELETE FROM publish_gates WHERE graph_id = $1")
        .bind(allowed.graph().as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}

/// The newest finished experiment of `version` on the gate's dataset
/// version.
async fn newest_finished(
    db: &Db,
    allowed: &Allowed,
    gate: &PublishGate,
    version: i64,
) -> Result<Option<Experiment>, AppError> {
    let id: Option<String> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT id FROM experiments WHERE graph_id = $1 AND graph_version = $2
            AND dataset_id = $3 AND dataset_version = $4 AND status = 'finished'
          ORDER BY created_at DESC, id DESC LIMIT 1",
    )
    .bind(allowed.graph().as_str())
    .bind(version)
    .bind(&gate.dataset_id)
    .bind(gate.dataset_version)
    .fetch_optional(pool)
    .await)?;
    match id {
        Some(id) => super::get(db, allowed, &id).await.map(Some),
        None => Ok(None),
    }
}

/// Whether `candidate` may go live in place of `live`: refused (409,
/// naming each scorer that fell, by how much) when the gate holds it
/// back. With no gate, anything may; with nothing live, or a live version
/// with no finished experiment on the gate's dataset, the candidate needs
/// only a finished experiment of its own.
pub async fn check(
    db: &Db,
    allowed: &Allowed,
    candidate: i64,
    live: Option<i64>,
) -> Result<(), AppError> {
    let Some(gate) = get(db, allowed).await? else {
        return Ok(());
    };
    let dataset = format!(
        "dataset `{}` version {}",
        gate.dataset_name.as_deref().unwrap_or(&gate.dataset_id),
        gate.dataset_version
    );
    let Some(mine) = newest_finished(db, allowed, &gate, candidate).await? else {
        return Err(AppError::PublishRefused(format!(
            "publishing is gated on {dataset}: run an experiment of version {candidate} on it \
             first"
        )));
    };
    let Some(live) = live.filter(|live| *live != candidate) else {
        return Ok(());
    };
    let Some(theirs) = newest_finished(db, allowed, &gate, live).await? else {
        return Ok(());
    };
    let fell = fallen(&gate, &mine, &theirs);
    if fell.is_empty() {
        return Ok(());
    }
    Err(AppError::PublishRefused(format!(
        "version {candidate} scores worse than the live version {live} on {dataset}: {}",
        fell.join("; ")
    )))
}

/// Each scorer whose mean fell under the live one's less its tolerance,
/// in words.
fn fallen(gate: &PublishGate, candidate: &Experiment, live: &Experiment) -> Vec<String> {
    live.scores
        .iter()
        .filter_map(|theirs| {
            let tolerance = gate
                .tolerances
                .get(&theirs.scorer)
                .copied()
                .unwrap_or(gate.tolerance);
            let mine = candidate
                .scores
                .iter()
                .find(|mine| mine.scorer == theirs.scorer)
                .map_or(0.0, |mine| mine.mean);
            (mine < theirs.mean - tolerance - 1e-9).then(|| {
                format!(
                    "`{}` {mine:.2} against {:.2} (tolerance {tolerance:.2})",
                    theirs.scorer, theirs.mean
                )
            })
        })
        .collect()
}
