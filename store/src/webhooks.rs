//! The `webhooks` and `webhook_deliveries` tables: hooks made, changed and
//! found by their URL's token (by its SHA-256), and each delivery claimed
//! once.

use heddle_engine::ids::RunId;
use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::access::Allowed;
use crate::db::Db;
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::graphs::GraphId;
use heddle_wire::webhooks::{MAX_MAPPING, Respond, Webhook, WebhookSettings, WebhookUrl};

/// Where hooks are called: `POST <this><token>`.
pub const PATH_PREFIX: &str = "/api/v1/hooks/";

/// A hook as its URL's caller needs it.
#[derive(Debug, Clone)]
pub struct Hook {
    pub id: String,
    pub graph_id: String,
    pub name: String,
    pub mapping: Option<BTreeMap<String, String>>,
    pub signing_secret: Option<String>,
    pub respond: Respond,
    pub enabled: bool,
    /// The maker's user id.
    pub created_by: String,
}

#[derive(sqlx::FromRow)]
struct HookRow {
    id: String,
    graph_id: String,
    name: String,
    prefix: String,
    mapping: Option<String>,
    signing_secret: Option<String>,
    respond: String,
    enabled: bool,
    created_by: String,
    maker: Option<String>,
    created_at: String,
    last_used_at: Option<String>,
}

/// `SELECT <the hook columns> FROM webhooks w <rest>`, as one literal.
macro_rules! select_hooks {
    ($rest:literal) => {
        concat!(
            "SELECT w.id, w.graph_id, w.name, w.prefix, w.mapping, w.signing_secret, w.respond, ",
            "w.enabled, w.created_by, (SELECT username FROM users u WHERE u.id = w.created_by) AS maker, ",
            "w.created_at, w.last_used_at FROM webhooks w ",
            $rest
        )
    };
}

impl HookRow {
    fn mapping(&self) -> Result<Option<BTreeMap<String, String>>, AppError> {
        self.mapping
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|_| broken(&self.id, "mapping"))
    }

    fn respond(&self) -> Result<Respond, AppError> {
        Respond::parse(&self.respond).ok_or_else(|| broken(&self.id, "respond"))
    }

    fn into_webhook(self) -> Result<Webhook, AppError> {
        Ok(Webhook {
            mapping: self.mapping()?,
            respond: self.respond()?,
            id: self.id,
            graph_id: GraphId::from_stored(self.graph_id),
            name: self.name,
            prefix: self.prefix,
            signing_secret: self.signing_secret,
            enabled: self.enabled,
            created_by: self.maker,
            created_at: self.created_at,
            last_used_at: self.last_used_at,
        })
    }

    fn into_hook(self) -> Result<Hook, AppError> {
        Ok(Hook {
            mapping: self.mapping()?,
            respond: self.respond()?,
            id: self.id,
            graph_id: self.graph_id,
            name: self.name,
            signing_secret: self.signing_secret,
            enabled: self.enabled,
            created_by: self.created_by,
        })
    }
}

fn broken(id: &str, what: &str) -> AppError {
    tracing::error!(webhook = id, "a stored webhook's {what} does not read back");
    AppError::Internal
}

fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A new URL token: 256 random bits as hex.
fn new_token() -> Result<String, AppError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| {
        tracing::error!(%error, "no randomness for a webhook");
        AppError::Internal
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks settings: the name, the mapping's pointers, and that the signing
/// secret is one of the maker's (`maker_id`).
async fn check(db: &Db, maker_id: &str, settings: &WebhookSettings) -> Result<(), AppError> {
    let name = settings.name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(AppError::InvalidInput(
            "`name`: a webhook's name is 1 to 64 characters".into(),
        ));
    }
    if let Some(mapping) = &settings.mapping {
        if mapping.len() > MAX_MAPPING {
            return Err(AppError::InvalidInput(format!(
                "`mapping`: at most {MAX_MAPPING} channels"
            )));
        }
        for (channel, pointer) in mapping {
            if channel.is_empty() {
                return Err(AppError::InvalidInput(
                    "`mapping`: a channel's name is empty".into(),
                ));
            }
            if !pointer.is_empty() && !pointer.starts_with('/') {
                return Err(AppError::InvalidInput(format!(
                    "`mapping.{channel}`: `{pointer}` is not a JSON pointer (they start with `/`, \
                     e.g. `/issue/title`; `\"\"` is the whole body)"
                )));
            }
        }
    }
    if let Some(secret) = &settings.signing_secret {
        let names = crate::secrets::names(db, maker_id).await?;
        if !names.contains(secret) {
            return Err(AppError::InvalidInput(format!(
                "`signing_secret`: the hook's maker has no secret named `{secret}`; save it under \
                 Settings first"
            )));
        }
    }
    Ok(())
}

/// The graph's hooks, newest first.
pub async fn list(db: &Db, allowed: &Allowed) -> Result<Vec<Webhook>, AppError> {
    let rows: Vec<HookRow> = on_db!(db, pool => sqlx::query_as(select_hooks!(
        "WHERE w.graph_id = $1 ORDER BY w.created_at DESC, w.id"
    ))
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await)?;
    rows.into_iter().map(HookRow::into_webhook).collect()
}

/// One of the graph's hooks.
async fn one(db: &Db, allowed: &Allowed, id: &str) -> Result<HookRow, AppError> {
    let row: Option<HookRow> = on_db!(db, pool => sqlx::query_as(select_hooks!(
        "WHERE w.graph_id = $1 AND w.id = $2"
    ))
    .bind(allowed.graph().as_str())
    .bind(id)
    .fetch_optional(pool)
    .await)?;
    row.ok_or_else(|| AppError::not_found(format!("webhook {id}")))
}

/// Makes a hook for the graph, made by the editor `allowed` names.
pub async fn create(
    db: &Db,
    allowed: &Allowed,
    settings: WebhookSettings,
) -> Result<WebhookUrl, AppError> {
    allowed.at_least(Role::Editor)?;
    let maker = allowed.user().id.as_str();
    check(db, maker, &settings).await?;
    let id = uuid::Uuid::new_v4().to_string();
    let token = new_token()?;
    let mapping = settings
        .mapping
        .as_ref()
        .map(|mapping| serde_json::json!(mapping).to_string());
    on_db!(db, pool => sqlx::query(
        "INSERT INTO webhooks (id, graph_id, name, token_sha256, prefix, mapping, signing_secret,
                               respond, enabled, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&id)
    .bind(allowed.graph().as_str())
    .bind(settings.name.trim())
    .bind(digest(&token))
    .bind(&token[..8])
    .bind(&mapping)
    .bind(&settings.signing_secret)
    .bind(settings.respond.as_str())
    .bind(settings.enabled)
    .bind(maker)
    .bind(crate::db::now())
    .execute(pool)
    .await
    .map(|_| ()))?;
    tracing::info!(webhook = %id, graph = %allowed.graph(), "webhook made");
    Ok(WebhookUrl {
        webhook: one(db, allowed, &id).await?.into_webhook()?,
        path: format!("{PATH_PREFIX}{token}"),
    })
}

/// Changes a hook's settings (its URL stays).
pub async fn update(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    settings: WebhookSettings,
) -> Result<Webhook, AppError> {
    let current = one(db, allowed, id).await?;
    crate::access::require_maker(allowed, &current.created_by, "webhook", false)?;
    check(db, &current.created_by, &settings).await?;
    let mapping = settings
        .mapping
        .as_ref()
        .map(|mapping| serde_json::json!(mapping).to_string());
    on_db!(db, pool => sqlx::query(
        "UPDATE webhooks SET name = $1, mapping = $2, signing_secret = $3, respond = $4, enabled = $5
         WHERE id = $6 AND graph_id = $7",
    )
    .bind(settings.name.trim())
    .bind(&mapping)
    .bind(&settings.signing_secret)
    .bind(settings.respond.as_str())
    .bind(settings.enabled)
    .bind(id)
    .bind(allowed.graph().as_str())
    .execute(pool)
    .await
    .map(|_| ()))?;
    one(db, allowed, id).await?.into_webhook()
}

/// Gives a hook a new URL: the old one stops working at once.
pub async fn regenerate(db: &Db, allowed: &Allowed, id: &str) -> Result<WebhookUrl, AppError> {
    let current = one(db, allowed, id).await?;
    crate::access::require_maker(allowed, &current.created_by, "webhook", false)?;
    let token = new_token()?;
    on_db!(db, pool => sqlx::query(
        "UPDATE webhooks SET token_sha256 = $1, prefix = $2 WHERE id = $3 AND graph_id = $4",
    )
    .bind(digest(&token))
    .bind(&token[..8])
    .bind(id)
    .bind(allowed.graph().as_str())
    .execute(pool)
    .await
    .map(|_| ()))?;
    tracing::info!(webhook = %id, "webhook URL regenerated");
    Ok(WebhookUrl {
        webhook: one(db, allowed, id).await?.into_webhook()?,
        path: format!("{PATH_PREFIX}{token}"),
    })
}

/// Deletes a hook.
pub async fn delete(db: &Db, allowed: &Allowed, id: &str) -> Result<(), AppError> {
    let current = one(db, allowed, id).await?;
    crate::access::require_maker(allowed, &current.created_by, "webhook", true)?;
    on_db!(db, pool => sqlx::query("DELETE FROM webhooks WHERE id = $1 AND graph_id = $2")
        .bind(id)
        .bind(allowed.graph().as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}

/// The hook a URL token names, if any (enabled or not).
pub async fn by_token(db: &Db, token: &str) -> Result<Option<Hook>, AppError> {
    let row: Option<HookRow> = on_db!(db, pool => sqlx::query_as(select_hooks!(
        "WHERE w.token_sha256 = $1"
    ))
    .bind(digest(token))
    .fetch_optional(pool)
    .await)?;
    row.map(HookRow::into_hook).transpose()
}

/// What claiming a delivery found.
pub enum Delivery {
    /// New: this call handles it.
    New,
    /// Seen before: the run it started (`None` while that call is still
    /// starting it).
    Seen(Option<RunId>),
}

/// Deliveries remembered for good (signed with no timestamp, so a replay
/// of one stays possible as long as the secret does) start with this.
pub const KEPT: &str = "kept:";

/// How long a delivery is remembered (a sender's retries come sooner).
const DELIVERIES_KEPT: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Claims delivery `delivery` of hook `hook`, once across every server.
pub async fn claim_delivery(db: &Db, hook: &str, delivery: &str) -> Result<Delivery, AppError> {
    on_db!(db, pool => sqlx::query(
        "DELETE FROM webhook_deliveries
         WHERE webhook_id = $1 AND received_at < $2 AND delivery NOT LIKE $3",
    )
    .bind(hook)
    .bind(crate::db::ago(DELIVERIES_KEPT))
    .bind(format!("{KEPT}%"))
    .execute(pool)
    .await
    .map(|_| ()))?;
    let claimed = on_db!(db, pool => sqlx::query(
        "INSERT INTO webhook_deliveries (webhook_id, delivery, run_id, received_at)
         VALUES ($1, $2, '', $3) ON CONFLICT (webhook_id, delivery) DO NOTHING",
    )
    .bind(hook)
    .bind(delivery)
    .bind(crate::db::now())
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    if claimed == 1 {
        return Ok(Delivery::New);
    }
    let run: Option<String> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT run_id FROM webhook_deliveries WHERE webhook_id = $1 AND delivery = $2",
    )
    .bind(hook)
    .bind(delivery)
    .fetch_optional(pool)
    .await)?;
    Ok(Delivery::Seen(
        run.filter(|run| !run.is_empty()).map(RunId::from),
    ))
}

/// Notes the run a delivery started (`None`: it started none, and may be
/// sent again).
pub async fn finish_delivery(
    db: &Db,
    hook: &str,
    delivery: &str,
    run: Option<&str>,
) -> Result<(), AppError> {
    match run {
        Some(run) => on_db!(db, pool => sqlx::query(
            "UPDATE webhook_deliveries SET run_id = $1 WHERE webhook_id = $2 AND delivery = $3",
        )
        .bind(run)
        .bind(hook)
        .bind(delivery)
        .execute(pool)
        .await
        .map(|_| ()))?,
        None => on_db!(db, pool => sqlx::query(
            "DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND delivery = $2",
        )
        .bind(hook)
        .bind(delivery)
        .execute(pool)
        .await
        .map(|_| ()))?,
    }
    Ok(())
}

/// Notes that a hook was called.
pub async fn touch(db: &Db, hook: &str) -> Result<(), AppError> {
    on_db!(db, pool => sqlx::query("UPDATE webhooks SET last_used_at = $1 WHERE id = $2")
        .bind(crate::db::now())
        .bind(hook)
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}
