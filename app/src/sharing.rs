//! The server functions for members and share links.
//!
//! What they send and answer is [`heddle_wire::sharing`] (re-exported here, so
//! the UI names it `crate::sharing::…`); the rows and rules are
//! `heddle_store::sharing`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
pub use heddle_wire::sharing::*;
use leptos::prelude::*;

/// The graph's links and members (owner only).
#[server(endpoint = "sharing")]
pub async fn get_sharing(graph_id: String) -> Result<Sharing, AppError> {
    with_error_status(here::sharing_here(&graph_id).await)
}

/// Makes a share link (owner only). `role` is `viewer` or `editor`.
#[server(endpoint = "create_share_link")]
pub async fn create_share_link(
    graph_id: String,
    role: Grant,
    // Text, so the form's "never" (an empty value) reads as none.
    #[server(default)] expires_in_hours: Option<String>,
    #[server(default)] run_id: Option<String>,
    #[server(default)] step: Option<i64>,
) -> Result<ShareLink, AppError> {
    let expires_in_hours = match expires_in_hours.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(hours) => Some(hours.parse::<u32>().map_err(|_| {
            AppError::InvalidInput(format!(
                "`expires_in_hours` must be a number of hours, not `{hours}`"
            ))
        })?),
    };
    let run_id = run_id.filter(|run| !run.is_empty());
    with_error_status(here::create_link_here(&graph_id, role, expires_in_hours, run_id, step).await)
}

/// Revokes a link (owner only); whoever got access through it loses it now.
#[server(endpoint = "revoke_share_link")]
pub async fn revoke_share_link(graph_id: String, link_id: String) -> Result<(), AppError> {
    with_error_status(here::revoke_link_here(&graph_id, &link_id).await)
}

/// Grants `username` a role, changes it, or (`role` = `none`) takes it
/// away (owner only).
#[server(endpoint = "set_member_role")]
pub async fn set_member_role(
    graph_id: String,
    username: String,
    role: MemberAccess,
) -> Result<(), AppError> {
    with_error_status(here::set_member_here(&graph_id, &username, role).await)
}

/// What a share link offers (grants nothing).
#[server(endpoint = "preview_share_link")]
pub async fn preview_share_link(token: String) -> Result<LinkPreview, AppError> {
    with_error_status(here::preview_here(&token).await)
}

/// Opens a share link as the logged-in user: grants its role and sends
/// the browser to the graph (or the run and step the link names).
#[server(endpoint = "accept_share_link")]
pub async fn accept_share_link(token: String) -> Result<Accepted, AppError> {
    let accepted = with_error_status(here::accept_here(&token).await)?;
    leptos_axum::redirect(&accepted.target);
    Ok(accepted)
}

/// The bodies of the server functions for the share dialog and share links: the store's
/// calls with the database, the caller and the settings read from the request.
#[cfg(feature = "ssr")]
mod here {
    use heddle_store::sharing::*;
    use heddle_wire::AppError;
    use heddle_wire::sharing::*;

    pub(super) async fn sharing_here(graph_id: &str) -> Result<Sharing, AppError> {
        sharing(
            &crate::request::db()?,
            Some(&crate::request::require_user()?),
            graph_id,
        )
        .await
    }

    pub(super) async fn create_link_here(
        graph_id: &str,
        role: Grant,
        expires_in_hours: Option<u32>,
        run_id: Option<String>,
        step: Option<i64>,
    ) -> Result<ShareLink, AppError> {
        let user = crate::request::require_user()?;
        create_link(
            &crate::request::db()?,
            Some(&user),
            graph_id,
            role,
            expires_in_hours,
            run_id,
            step,
        )
        .await
    }

    pub(super) async fn revoke_link_here(graph_id: &str, link_id: &str) -> Result<(), AppError> {
        let user = crate::request::require_user()?;
        revoke_link(
            &crate::request::db()?,
            crate::request::auth()?.events(),
            Some(&user),
            graph_id,
            link_id,
        )
        .await
    }

    pub(super) async fn set_member_here(
        graph_id: &str,
        username: &str,
        role: MemberAccess,
    ) -> Result<(), AppError> {
        let user = crate::request::require_user()?;
        set_member(
            &crate::request::db()?,
            crate::request::auth()?.events(),
            Some(&user),
            graph_id,
            username,
            role,
        )
        .await
    }

    pub(super) async fn preview_here(token: &str) -> Result<LinkPreview, AppError> {
        let user = crate::request::require_user()?;
        preview(&crate::request::db()?, Some(&user), token).await
    }

    pub(super) async fn accept_here(token: &str) -> Result<Accepted, AppError> {
        let user = crate::request::require_user()?;
        accept(&crate::request::db()?, Some(&user), token).await
    }
}
