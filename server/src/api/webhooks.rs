//! Webhooks over the API: editors make, change, regenerate and delete a
//! graph's hooks (viewers list them), and anyone holding a hook's URL
//! calls it (`POST /api/v1/hooks/{token}`): the JSON body, mapped onto the
//! input, starts a run of the published version as the hook's maker.
//!
//! A hook with a signing secret takes only signed calls, either Heddle's
//! way (`X-Heddle-Timestamp: <unix seconds>` and `X-Heddle-Signature:
//! sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`, for 5 minutes) or
//! GitHub's (`X-Hub-Signature-256: sha256=<hex HMAC of the body>`). A
//! delivery is handled once: the same `X-Heddle-Delivery` (or
//! `X-GitHub-Delivery`, `Idempotency-Key`, or for signed calls the same
//! signature) answers with the run it started instead of starting another.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::NoContent;
use heddle_store::access::{Trigger, require, require_person, require_trigger};
use heddle_store::accounts::ClientAddress;
use heddle_store::accounts::shared_limit::{self, Limit};
use heddle_store::db::Db;
use heddle_store::webhooks::{self as webhooks, Delivery, Hook};
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::runs::{RunOrigin, StartRequest};
use heddle_wire::webhooks::{Respond, Webhook, WebhookSettings, WebhookUrl};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;

use super::invoke::InvokeAnswer;
use super::params::{GraphPath, HookPath, WebhookPath};
use super::responses::Created;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::runs::outcome;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// How long a signed call stays good.
const SIGNATURE_WINDOW_SECONDS: u64 = 300;
/// How long a hook answering with the result waits for it.
const RESULT_WITHIN: Duration = Duration::from_secs(30);
/// Calls one hook takes: a burst, then one a second.
const CALLS: Limit = Limit {
    burst: 30,
    refill: Duration::from_secs(1),
};
/// Signature checks one address may ask of one signed hook: a burst, then
/// one a second (a check costs a hash and a database read).
const CHECKS: Limit = Limit {
    burst: 60,
    refill: Duration::from_secs(1),
};

/// `GET /api/v1/graphs/{id}/webhooks` (viewers and up).
pub async fn list(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Vec<Webhook>>> {
    let allowed = require_person(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(webhooks::list(&state.db, &allowed).await?))
}

/// `POST /api/v1/graphs/{id}/webhooks`: 201 with the hook and its URL's
/// path, shown this once.
pub async fn create(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(settings): ApiJson<WebhookSettings>,
) -> Result<Created<WebhookUrl>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Created(
        webhooks::create(&state.db, &allowed, settings).await?,
    ))
}

/// `PUT /api/v1/graphs/{id}/webhooks/{hook}`: its new settings.
pub async fn update(
    State(state): State<AppState>,
    who: Who,
    Path(WebhookPath { id, hook }): Path<WebhookPath>,
    ApiJson(settings): ApiJson<WebhookSettings>,
) -> Result<Json<Webhook>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        webhooks::update(&state.db, &allowed, &hook, settings).await?,
    ))
}

/// `POST /api/v1/graphs/{id}/webhooks/{hook}/regenerate`: a new URL.
pub async fn regenerate(
    State(state): State<AppState>,
    who: Who,
    Path(WebhookPath { id, hook }): Path<WebhookPath>,
) -> Result<Json<WebhookUrl>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        webhooks::regenerate(&state.db, &allowed, &hook).await?,
    ))
}

/// `DELETE /api/v1/graphs/{id}/webhooks/{hook}`: 204.
pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(WebhookPath { id, hook }): Path<WebhookPath>,
) -> Result<NoContent> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    webhooks::delete(&state.db, &allowed, &hook).await?;
    Ok(NoContent)
}

/// `POST /api/v1/hooks/{token}`: runs the hook's graph; 202 with the run,
/// or (for hooks that answer with the result) 200 with its outcome.
pub async fn call(
    State(state): State<AppState>,
    Path(HookPath { token }): Path<HookPath>,
    client: Option<axum::Extension<ClientAddress>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<InvokeAnswer> {
    let db = &state.db;
    let hook = webhooks::by_token(db, &token)
        .await?
        .ok_or_else(|| AppError::not_found("a webhook at this URL"))?;
    if !hook.enabled {
        return Err(AppError::Gone(format!("webhook `{}` is turned off", hook.name)).into());
    }
    // A signed hook's budget is spent only by calls that carry its
    // signature: forged ones would otherwise use it up and lock its sender
    // out. The check itself is guarded per caller's address.
    let signature = match &hook.signing_secret {
        Some(secret) => {
            let caller = client
                .and_then(|axum::Extension(ClientAddress(address))| address)
                .map_or_else(|| "unknown".to_string(), |ip| ip.to_string());
            over_limit(
                db,
                &format!("webhook-check:{}:{caller}", hook.id),
                CHECKS,
                &hook.name,
            )
            .await?;
            Some(verify(&state, &hook, secret, &headers, &body).await?)
        }
        None => None,
    };
    over_limit(db, &format!("webhook:{}", hook.id), CALLS, &hook.name).await?;
    let input = input(&hook, &body)?;
    // A signed call is remembered by its signature, which the sender's
    // secret made: a delivery id is not signed, so for signed hooks it is
    // not what tells one call from another (a replay could pick a new one).
    let delivery = signature.or_else(|| {
        header(&headers, "x-heddle-delivery")
            .or_else(|| header(&headers, "x-github-delivery"))
            .or_else(|| header(&headers, "idempotency-key"))
            .map(str::to_string)
    });
    if let Some(delivery) = &delivery {
        match webhooks::claim_delivery(db, &hook.id, delivery).await? {
            Delivery::New => {}
            Delivery::Seen(Some(run)) => {
                let run = state.runs.record(&run).await?;
                return InvokeAnswer::of(&state.runs, run).await;
            }
            Delivery::Seen(None) => {
                return Err(AppError::InvalidInput(format!(
                    "delivery `{delivery}` is being handled; send it again in a moment"
                ))
                .into());
            }
        }
    }
    let started = start(&state, &hook, input).await;
    if let Some(delivery) = &delivery {
        let run = started.as_ref().ok().map(|run| run.id.as_str());
        webhooks::finish_delivery(db, &hook.id, delivery, run).await?;
    }
    let run = started?;
    webhooks::touch(db, &hook.id).await?;
    let run = match hook.respond {
        Respond::Run => run,
        Respond::Result => outcome::wait(&state.runs, &run.id, RESULT_WITHIN).await?,
    };
    InvokeAnswer::of(&state.runs, run).await
}

/// Takes one call of `key`'s budget, or refuses with 429 and when to
/// try again.
async fn over_limit(db: &Db, key: &str, limit: Limit, hook: &str) -> Result<()> {
    match shared_limit::take(db, key, limit).await? {
        Ok(()) => Ok(()),
        Err(wait) => Err(AppError::TooManyRequests(format!(
            "webhook `{hook}` takes {} calls at once, then {}; try again in {} s",
            limit.burst,
            match limit.refill.as_secs() {
                1 => "one a second".to_string(),
                n => format!("one every {n} s"),
            },
            wait.as_secs().max(1)
        ))
        .into()),
    }
}

/// Starts the run as the hook's maker, who must still be an editor.
async fn start(
    state: &AppState,
    hook: &Hook,
    input: Value,
) -> std::result::Result<heddle_wire::runs::RunInfo, ApiError> {
    let refused = || {
        AppError::Forbidden(format!(
            "webhook `{}` cannot run its graph: the person who made it is no longer an editor of it",
            hook.name
        ))
    };
    let maker = heddle_store::accounts::user_by_id(&state.db, &hook.created_by)
        .await?
        .ok_or_else(refused)?;
    let trigger = Trigger {
        origin: RunOrigin::Webhook,
        id: hook.id.clone(),
        name: hook.name.clone(),
    };
    let allowed = require_trigger(&state.db, &maker, &hook.graph_id, trigger)
        .await
        .map_err(|error| match error {
            AppError::NotFound { .. } | AppError::Forbidden(_) => refused(),
            other => other,
        })?;
    let request = StartRequest {
        input,
        ..StartRequest::default()
    };
    Ok(state.runs.start_published(&allowed, request).await?)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .filter(|value| !value.is_empty())
}

/// The run's input from the body, through the hook's mapping.
fn input(hook: &Hook, body: &[u8]) -> Result<Value> {
    let body: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        serde_json::from_slice(body)
            .map_err(|error| AppError::InvalidInput(format!("the body is not JSON: {error}")))?
    };
    let Some(mapping) = &hook.mapping else {
        return match body {
            Value::Object(_) => Ok(body),
            _ => Err(AppError::InvalidInput(
                "the body must be a JSON object of channel values (or give the webhook a mapping)"
                    .into(),
            )
            .into()),
        };
    };
    let mut input = Map::new();
    for (channel, pointer) in mapping {
        let value = body.pointer(pointer).ok_or_else(|| {
            AppError::InvalidInput(format!(
                "`mapping.{channel}`: the body has nothing at `{pointer}`"
            ))
        })?;
        input.insert(channel.clone(), value.clone());
    }
    Ok(Value::Object(input))
}

/// Checks the call's signature with the maker's secret `secret`; the
/// signature, as the delivery's id. One made with a timestamp is good for
/// minutes and is remembered for days; GitHub's has no timestamp, so it is
/// remembered for good (`kept:`), and never starts a second run.
async fn verify(
    state: &AppState,
    hook: &Hook,
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<String> {
    let refused =
        |why: String| ApiError(AppError::Unauthorized(format!("signature refused: {why}")));
    let key = heddle_store::secrets::values(&state.db, state.runs.secret_key(), &hook.created_by)
        .await?
        .remove(secret)
        .ok_or_else(|| {
            tracing::warn!(webhook = %hook.id, secret, "a webhook's signing secret is missing");
            refused(format!(
                "webhook `{}` cannot check signatures: its signing secret is missing",
                hook.name
            ))
        })?;
    let mut forever = false;
    let (signed, given): (Vec<u8>, &str) = if let Some(given) =
        header(headers, "x-heddle-signature")
    {
        let timestamp = header(headers, "x-heddle-timestamp").ok_or_else(|| {
            refused("`X-Heddle-Signature` comes with `X-Heddle-Timestamp` (unix seconds)".into())
        })?;
        let at: u64 = timestamp.parse().map_err(|_| {
            refused(format!(
                "`X-Heddle-Timestamp` `{timestamp}` is not unix seconds"
            ))
        })?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        if now.abs_diff(at) > SIGNATURE_WINDOW_SECONDS {
            return Err(refused(format!(
                "the timestamp is {} s from now; signed calls are taken for {SIGNATURE_WINDOW_SECONDS} s",
                now.abs_diff(at)
            )));
        }
        let mut signed = format!("{timestamp}.").into_bytes();
        signed.extend_from_slice(body);
        (signed, given)
    } else if let Some(given) = header(headers, "x-hub-signature-256") {
        forever = true;
        (body.to_vec(), given)
    } else {
        return Err(refused(format!(
            "webhook `{}` takes only signed calls: `X-Heddle-Signature` and \
                 `X-Heddle-Timestamp` (see docs/deploy-agents.md)",
            hook.name
        )));
    };
    let hex = given.strip_prefix("sha256=").unwrap_or(given);
    let expected = hex::decode(hex).map_err(|_| refused("the signature is not hex".into()))?;
    let mut mac =
        Hmac::<Sha256>::new_from_slice(key.as_bytes()).map_err(|_| ApiError(AppError::Internal))?;
    mac.update(&signed);
    mac.verify_slice(&expected)
        .map_err(|_| refused("it does not match the body".into()))?;
    let signature = format!("sig:{}", hex.to_ascii_lowercase());
    Ok(match forever {
        true => format!("{}{signature}", webhooks::KEPT),
        false => signature,
    })
}
