//! The HTTP router: server-rendered pages, server functions, static assets
//! from the built site (a folder, or the binary's own: `embedded_site`), and a health check for scripts and probes.

use std::sync::OnceLock;

use axum::{Json, Router, middleware, routing::get};
use heddle_app::{App, shell};
use leptos::prelude::provide_context;
use leptos_axum::{
    AxumRouteListing, LeptosRoutes, file_and_error_handler_with_context, generate_route_list,
};
use serde::Serialize;
use tower_http::trace::TraceLayer;

use crate::auth;
use crate::error_status::correct_error_status;
use crate::state::AppState;

/// The app's page routes, found once per process.
///
/// Finding them renders the app with resource loading suppressed by a
/// process-wide flag (leptos#4773): a page rendered by another server in
/// the same process at that moment (the test suite starts many) would wait
/// on a resource forever. Finding them once, before any server serves,
/// closes that window.
fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

/// Builds the whole app over `state`. Tests call this with a temporary
/// database and serve it on a free port.
pub fn router(state: AppState) -> Router {
    let routes = route_list();
    let pool = state.db.clone();
    let auth = state.auth.clone();
    let catalog = state.runs.catalog();
    let secret_key = state.runs.secret_key().clone();
    let runs: std::sync::Arc<dyn heddle_store::runs::RunControl> =
        std::sync::Arc::new(state.runs.clone());
    let context = move || {
        provide_context(std::sync::Arc::clone(&runs));
        provide_context(pool.clone());
        provide_context(auth.clone());
        provide_context(catalog.clone());
        provide_context(secret_key.clone());
        crate::security_headers::provide_page_nonce();
    };
    let options = state.leptos_options.clone();

    // Pages need an account (the log-in pages excepted); server functions
    // and the API check access themselves and answer 401/403/404.
    let pages = Router::new()
        .leptos_routes_with_context(&state, routes, context.clone(), move || {
            shell(options.clone())
        })
        .route_layer(middleware::from_fn(auth::login_wall));

    let mut app = Router::new()
        .route("/api/health", get(health))
        .route("/metrics", get(metrics))
        .merge(crate::api::routes())
        .merge(crate::openai::routes())
        .merge(crate::widget::routes())
        .merge(pages)
        .fallback(file_and_error_handler_with_context::<AppState, _>(
            context, shell,
        ));
    if let Some(site) = state.settings.embedded_site {
        app = app.layer(middleware::from_fn(move |request, next| {
            crate::embedded_site::serve(site, request, next)
        }));
    }
    app.layer(middleware::from_fn_with_state(
        state.clone(),
        auth::identify,
    ))
    .layer(auth::session_layer(&state))
    .layer(middleware::from_fn_with_state(
        state.clone(),
        auth::same_origin,
    ))
    .layer(middleware::from_fn_with_state(
        state.clone(),
        crate::host_guard::check,
    ))
    .layer(middleware::map_response(correct_error_status))
    .layer(middleware::from_fn(crate::security_headers::add))
    // Nothing reads a body larger than the API's largest: beyond it,
    // 413 before any handler (server functions included) runs.
    .layer(tower_http::limit::RequestBodyLimitLayer::new(
        crate::api::MAX_BODY_BYTES + 64 * 1024,
    ))
    .layer(middleware::from_fn(crate::api::contract::keep))
    .layer(TraceLayer::new_for_http())
    .with_state(state)
}

/// `GET /metrics`: the Prometheus text format, for a scraper that sends
/// the configured token (`HEDDLE_METRICS_TOKEN`); without one configured
/// there is nothing here.
async fn metrics(
    axum::extract::State(state): axum::extract::State<AppState>,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let Some(token) = state.settings.metrics_token.as_deref() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let offered = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !crate::auth::same_secret(offered, token) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "send the metrics token as `Authorization: Bearer <token>`\n",
        )
            .into_response();
    }
    let telemetry = state.runs.telemetry();
    telemetry.settled().await;
    let metrics = telemetry.metrics();
    match heddle_store::runs::count_queued(&state.db).await {
        Ok(queued) => {
            metrics.runs_queued.set(queued);
        }
        Err(error) => tracing::warn!(%error, "cannot count the queued runs for the metrics"),
    }
    metrics.runs_active.set(state.runs.active_count() as i64);
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.render(),
    )
        .into_response()
}

#[derive(Serialize)]
struct Health {
    status: &'static str,
    version: &'static str,
}

async fn health() -> Json<Health> {
    Json(Health {
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
    })
}
