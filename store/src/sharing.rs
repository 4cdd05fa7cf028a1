//! Share links and members: the only place the `share_links`,
//! `link_grants` and `graph_members` tables are touched.

use crate::db::Db;
use crate::on_db;

use crate::access::require;
use crate::access_events::{AccessChange, AccessEvents};
use crate::accounts::find_user;
use heddle_engine::ids::RunId;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::accounts::User;
use heddle_wire::graphs::GraphId;
use heddle_wire::sharing::{
    Accepted, Grant, LinkPreview, MAX_EXPIRY_HOURS, Member, MemberAccess, ShareLink, Sharing,
};

#[derive(sqlx::FromRow)]
struct LinkRow {
    id: String,
    graph_id: String,
    token: String,
    role: String,
    run_id: Option<String>,
    step: Option<i64>,
    created_at: String,
    expires_at: Option<String>,
    revoked: bool,
    expired: bool,
    uses: i64,
}

impl From<LinkRow> for ShareLink {
    fn from(row: LinkRow) -> Self {
        ShareLink {
            id: row.id,
            graph_id: GraphId::from_stored(row.graph_id),
            role: Role::parse(&row.role).unwrap_or(Role::Viewer),
            path: format!("/share/{}", row.token),
            run_id: row.run_id.map(RunId::from),
            step: row.step,
            created_at: row.created_at,
            expires_at: row.expires_at,
            revoked: row.revoked,
            expired: row.expired,
            uses: row.uses,
        }
    }
}

/// The columns of [`LinkRow`], selected from `share_links l`.
macro_rules! link_select {
    ($filter:literal) => {
        concat!(
            "SELECT l.id, l.graph_id, l.token, l.role, l.run_id, l.step, l.created_at, l.expires_at,
                    l.revoked_at IS NOT NULL AS revoked,
                    COALESCE(l.expires_at <= $1, FALSE) AS expired,
                    (SELECT COUNT(*) FROM link_grants g WHERE g.link_id = l.id) AS uses
             FROM share_links l WHERE ",
            $filter
        )
    };
}

/// A graph's links (newest first) and members.
pub async fn sharing(db: &Db, user: Option<&User>, graph_id: &str) -> Result<Sharing, AppError> {
    let allowed = require(db, user, graph_id, Role::Owner).await?;
    let links: Vec<LinkRow> = on_db!(db, pool => sqlx::query_as(link_select!(
        "l.graph_id = $2 ORDER BY l.created_at DESC, l.rowid DESC"
    ))
    .bind(crate::db::now())
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await)?;
    let members: Vec<(String, String)> = on_db!(db, pool => sqlx::query_as(
        "SELECT u.username, m.role FROM graph_members m JOIN users u ON u.id = m.user_id
         WHERE m.graph_id = $1 ORDER BY u.username",
    )
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await)?;
    Ok(Sharing {
        links: links.into_iter().map(ShareLink::from).collect(),
        members: members
            .into_iter()
            .map(|(username, role)| Member {
                username,
                role: Role::parse(&role).unwrap_or(Role::Viewer),
            })
            .collect(),
    })
}

/// 256 random bits as hex: a link's token.
fn new_token() -> Result<String, AppError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| {
        tracing::error!(%error, "no randomness for a share link");
        AppError::Internal
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Makes a link to the graph (or to one of its runs, at a step).
pub async fn create_link(
    db: &Db,
    user: Option<&User>,
    graph_id: &str,
    role: Grant,
    expires_in_hours: Option<u32>,
    run_id: Option<String>,
    step: Option<i64>,
) -> Result<ShareLink, AppError> {
    let allowed = require(db, user, graph_id, Role::Owner).await?;
    let role = Role::from(role);
    if let Some(hours) = expires_in_hours
        && !(1..=MAX_EXPIRY_HOURS).contains(&hours)
    {
        return Err(AppError::InvalidInput(format!(
            "`expires_in_hours` must be 1 to {MAX_EXPIRY_HOURS}"
        )));
    }
    if let Some(run) = &run_id {
        let owner = match crate::access::belongs::graph_of_run(db, &RunId::from(run.as_str())).await
        {
            Ok(graph) => Some(graph),
            Err(AppError::NotFound { .. }) => None,
            Err(other) => return Err(other),
        };
        if owner.as_deref() != Some(allowed.graph().as_str()) {
            return Err(AppError::InvalidInput(format!(
                "run `{run}` is not a run of this graph"
            )));
        }
    }
    if step.is_some_and(|step| step < 0) || (step.is_some() && run_id.is_none()) {
        return Err(AppError::InvalidInput(
            "`step` must be 0 or more, and needs a `run_id`".into(),
        ));
    }
    let id = uuid::Uuid::new_v4().to_string();
    on_db!(db, pool => sqlx::query(
        "INSERT INTO share_links (id, token, graph_id, role, run_id, step, created_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&id)
    .bind(new_token()?)
    .bind(allowed.graph().as_str())
    .bind(role.as_str())
    .bind(&run_id)
    .bind(step)
    .bind(allowed.user().id.as_str())
    .bind(expires_in_hours.map(|hours| crate::db::hours_from_now(i64::from(hours))))
    .execute(pool)
    .await
        .map(|done| done.rows_affected()))?;
    tracing::info!(graph = %allowed.graph(), link = %id, %role, "share link created");
    let row: LinkRow = on_db!(db, pool => sqlx::query_as(link_select!("l.id = $2"))
        .bind(crate::db::now())
        .bind(&id)
        .fetch_one(pool)
        .await)?;
    Ok(row.into())
}

/// Revokes a link: it stops working and its grants end, now.
pub async fn revoke_link(
    db: &Db,
    events: &AccessEvents,
    user: Option<&User>,
    graph_id: &str,
    link_id: &str,
) -> Result<(), AppError> {
    let allowed = require(db, user, graph_id, Role::Owner).await?;
    let changed = on_db!(db, pool => sqlx::query(
        "UPDATE share_links SET revoked_at = COALESCE(revoked_at, $1)
         WHERE id = $2 AND graph_id = $3",
    )
    .bind(crate::db::now())
    .bind(link_id)
    .bind(allowed.graph().as_str())
    .execute(pool)
    .await
        .map(|done| done.rows_affected()))?;
    if changed == 0 {
        return Err(AppError::not_found(format!("share link {link_id}")));
    }
    tracing::info!(graph = %allowed.graph(), link = %link_id, "share link revoked");
    events.announce(AccessChange::Graph(allowed.graph().to_string()));
    Ok(())
}

/// Grants, changes or ([`MemberAccess::None`]) removes a member's role.
pub async fn set_member(
    db: &Db,
    events: &AccessEvents,
    user: Option<&User>,
    graph_id: &str,
    username: &str,
    access: MemberAccess,
) -> Result<(), AppError> {
    let allowed = require(db, user, graph_id, Role::Owner).await?;
    let member = find_user(db, username)
        .await?
        .ok_or_else(|| AppError::InvalidInput(format!("nobody is called `{}`", username.trim())))?;
    if member.id == allowed.user().id {
        return Err(AppError::InvalidInput(
            "you own this graph; the owner's role cannot change".into(),
        ));
    }
    match access.grant() {
        None => on_db!(db, pool => sqlx::query(
            "DELETE FROM graph_members WHERE graph_id = $1 AND user_id = $2"
        )
        .bind(allowed.graph().as_str())
        .bind(member.id.as_str())
        .execute(pool)
        .await
        .map(|_| ()))?,
        Some(grant) => on_db!(db, pool => sqlx::query(
            "INSERT INTO graph_members (graph_id, user_id, role) VALUES ($1, $2, $3)
             ON CONFLICT (graph_id, user_id) DO UPDATE SET role = excluded.role",
        )
        .bind(allowed.graph().as_str())
        .bind(member.id.as_str())
        .bind(Role::from(grant).as_str())
        .execute(pool)
        .await
        .map(|_| ()))?,
    }
    events.announce(AccessChange::Graph(allowed.graph().to_string()));
    Ok(())
}

/// The link a token names, if it still works: a revoked or expired link
/// says so plainly (410), an unknown token is a 404.
async fn usable_link(db: &Db, token: &str) -> Result<LinkRow, AppError> {
    let row: Option<LinkRow> = on_db!(db, pool => sqlx::query_as(link_select!("l.token = $2"))
        .bind(crate::db::now())
        .bind(token)
        .fetch_optional(pool)
        .await)?;
    let Some(row) = row else {
        return Err(AppError::not_found("share link"));
    };
    if row.revoked {
        return Err(AppError::Gone(
            "this share link was revoked by the graph's owner; ask them for a new one".into(),
        ));
    }
    if row.expired {
        return Err(AppError::Gone(format!(
            "this share link expired on {}; ask the graph's owner for a new one",
            heddle_wire::graphs::display_timestamp(row.expires_at.as_deref().unwrap_or_default())
        )));
    }
    Ok(row)
}

/// What a link offers, before anyone accepts it: reading this grants
/// nothing (a page opened by a cross-site GET can only show it).
pub async fn preview(db: &Db, user: Option<&User>, token: &str) -> Result<LinkPreview, AppError> {
    user.ok_or_else(AppError::login_required)?;
    let link = usable_link(db, token).await?;
    let row: Option<(String, Option<String>)> = on_db!(db, pool => sqlx::query_as(
        "SELECT g.name, u.username FROM graphs g LEFT JOIN users u ON u.id = g.owner_id
         WHERE g.id = $1",
    )
    .bind(&link.graph_id)
    .fetch_optional(pool)
    .await)?;
    let (graph_name, owner) = row.ok_or_else(|| AppError::not_found("share link"))?;
    Ok(LinkPreview {
        graph_name,
        owner: owner.unwrap_or_default(),
        role: Role::parse(&link.role).unwrap_or(Role::Viewer),
    })
}

/// Opens a link as `user`: records the grant and says where to go. Only
/// through a POST from Heddle's own page (the same-origin guard refuses
/// others), never while rendering a page.
pub async fn accept(db: &Db, user: Option<&User>, token: &str) -> Result<Accepted, AppError> {
    let user = user.ok_or_else(AppError::login_required)?;
    let LinkRow {
        id: link_id,
        graph_id,
        role,
        run_id,
        step,
        ..
    } = usable_link(db, token).await?;
    on_db!(db, pool => sqlx::query("INSERT INTO link_grants (link_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
        .bind(&link_id)
        .bind(user.id.as_str())
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
    let graph = crate::access::graph_id(&graph_id)?;
    let role = crate::access::role(db, user, &graph)
        .await?
        .unwrap_or_else(|| Role::parse(&role).unwrap_or(Role::Viewer));
    let target = match (run_id, step) {
        (Some(run), Some(step)) => format!("{}?run={run}&step={step}", graph.href()),
        (Some(run), None) => format!("{}?run={run}", graph.href()),
        _ => graph.href(),
    };
    tracing::info!(graph = %graph, link = %link_id, user = %user.id.as_str(), "share link opened");
    Ok(Accepted {
        graph_id: graph,
        role,
        target,
    })
}
