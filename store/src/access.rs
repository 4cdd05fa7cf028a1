//! Access checks against the database, shared by server functions, the
//! HTTP API and the websocket. Every data module takes the proof types
//! made here ([`Allowed`], [`OnRun`], [`OnThread`], [`Trigger`]); this
//! module reads only what a decision needs: roles, links, keys
//! ([`belongs`]: which graph a run or thread is of).

pub mod belongs;

use crate::db::Db;
use crate::on_db;
use heddle_engine::ids::{RunId, ThreadId};

use crate::caller::{Caller, KeyGrant};
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::accounts::User;
use heddle_wire::api_keys::KeyScope;
use heddle_wire::graphs::GraphId;
use heddle_wire::runs::RunOrigin;

/// The user's role on a graph; `None` when the graph does not exist or
/// the user has no access to it (the two look the same to them).
pub async fn role(db: &Db, user: &User, graph: &GraphId) -> Result<Option<Role>, AppError> {
    let row: Option<(Option<String>, Option<String>, Option<i64>)> = on_db!(db, pool => sqlx::query_as(
        "SELECT
            CASE WHEN g.owner_id = $1 THEN 'owner' END,
            (SELECT m.role FROM graph_members m WHERE m.graph_id = g.id AND m.user_id = $1),
            (SELECT CAST(MAX(CASE l.role WHEN 'editor' THEN 2 ELSE 1 END) AS BIGINT)
               FROM link_grants lg JOIN share_links l ON l.id = lg.link_id
              WHERE l.graph_id = g.id AND lg.user_id = $1 AND l.revoked_at IS NULL
                AND (l.expires_at IS NULL OR l.expires_at > $3))
         FROM graphs g WHERE g.id = $2",
    )
    .bind(user.id.as_str())
    .bind(graph.as_str())
    .bind(crate::db::now())
    .fetch_optional(pool)
    .await)?;
    let Some((owner, member, link)) = row else {
        return Ok(None);
    };
    let link = match link {
        Some(2) => Some(Role::Editor),
        Some(_) => Some(Role::Viewer),
        None => None,
    };
    Ok([
        owner.as_deref().and_then(Role::parse),
        member.as_deref().and_then(Role::parse),
        link,
    ]
    .into_iter()
    .flatten()
    .max())
}

/// The refusal of `user`, who has no role on graph `id`: "your access
/// ended" when a share link once let them in, else "not found".
async fn explain_denial(db: &Db, user: &User, id: &str) -> Result<AppError, AppError> {
    let graph = graph_id(id)?;
    Ok(match ended_link(db, user, &graph).await? {
        Some(how) => AppError::Gone(format!(
            "your access to this graph has ended: {how}. Ask its owner for a new link"
        )),
        None => AppError::not_found(format!("graph {graph}")),
    })
}

/// Why a share link this user once opened for `graph` no longer lets them
/// in (revoked, or expired), when that is why they have no access. Only
/// someone who was let in is told: to anyone else the graph stays "not
/// found".
async fn ended_link(
    db: &Db,
    user: &User,
    graph: &GraphId,
) -> Result<Option<&'static str>, AppError> {
    let revoked: Option<Option<String>> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT l.revoked_at FROM link_grants lg JOIN share_links l ON l.id = lg.link_id
          WHERE l.graph_id = $1 AND lg.user_id = $2
            AND (l.revoked_at IS NOT NULL OR (l.expires_at IS NOT NULL AND l.expires_at <= $3))
          ORDER BY lg.created_at DESC LIMIT 1",
    )
    .bind(graph.as_str())
    .bind(user.id.as_str())
    .bind(crate::db::now())
    .fetch_optional(pool)
    .await)?;
    Ok(revoked.map(|revoked| match revoked {
        Some(_) => "the share link you opened was revoked",
        None => "the share link you opened has expired",
    }))
}

/// What an allowed request learned: who, which graph, with what role, and
/// the trigger it came through (an API key, a webhook, a schedule), if any.
///
/// Only [`require`] and its kin make one (its fields are private), and
/// every read of a graph's content takes one (`graphs::get` and its
/// kin): there is no way to load a graph for a user without the decision
/// that allows it.
#[derive(Debug, Clone)]
pub struct Allowed {
    user: User,
    graph: GraphId,
    role: Role,
    trigger: Option<Trigger>,
}

/// What a request from outside the editor came through: runs it starts
/// are labelled with it, and run the published version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trigger {
    pub origin: RunOrigin,
    /// The key's, webhook's or schedule's id.
    pub id: String,
    /// Its name, as people gave it.
    pub name: String,
}

impl Allowed {
    /// Who was allowed (for a key, its owner).
    pub fn user(&self) -> &User {
        &self.user
    }

    /// The graph they may use.
    pub fn graph(&self) -> &GraphId {
        &self.graph
    }

    /// Their role on it (for a key, capped by its scope).
    pub fn role(&self) -> Role {
        self.role
    }

    /// The trigger the request came through.
    pub fn trigger(&self) -> Option<&Trigger> {
        self.trigger.as_ref()
    }

    /// Refuses (403) unless the role is at least `needed`; for functions
    /// that take an [`Allowed`] and do more than read.
    pub fn at_least(&self, needed: Role) -> Result<(), AppError> {
        if self.role < needed {
            return Err(AppError::Forbidden(match &self.trigger {
                Some(trigger) => format!(
                    "{} may not do this: it starts runs of the published version and never \
                     changes a graph",
                    trigger.describe()
                ),
                None => format!(
                    "you are {} of this graph; this needs the {needed} role",
                    article(self.role)
                ),
            }));
        }
        Ok(())
    }
}

/// Who is asking, as the access checks see them.
#[derive(Debug, Clone, Copy)]
pub enum Principal<'a> {
    Nobody,
    User(&'a User),
    Key(&'a KeyGrant),
}

impl<'a> From<Option<&'a User>> for Principal<'a> {
    fn from(user: Option<&'a User>) -> Self {
        user.map_or(Principal::Nobody, Principal::User)
    }
}

impl<'a> From<&'a User> for Principal<'a> {
    fn from(user: &'a User) -> Self {
        Principal::User(user)
    }
}

impl<'a> From<&'a Caller> for Principal<'a> {
    fn from(caller: &'a Caller) -> Self {
        match caller {
            Caller::Nobody => Principal::Nobody,
            Caller::User(user) => Principal::User(user),
            Caller::Key(key) => Principal::Key(key),
        }
    }
}

/// Checks that the caller holds at least `needed` on graph `id`:
/// anonymous callers get 401, callers who cannot see the graph 404 (its
/// existence is not revealed), those with a lower role 403 saying which
/// role it takes.
///
/// An API key sees only the graphs it names, with its owner's access to
/// them, and only reads (with the `read` scope): it changes nothing. Keys
/// start runs through [`require_to_run`], and act on the runs they
/// started through [`require_run`] and [`require_thread`].
pub async fn require<'a>(
    db: &Db,
    who: impl Into<Principal<'a>>,
    id: &str,
    needed: Role,
) -> Result<Allowed, AppError> {
    match who.into() {
        Principal::Nobody => Err(AppError::login_required()),
        // The person asking is told when their own access ended; callers
        // acting for someone else (a trigger's maker) use `require_user`.
        Principal::User(user) => match require_user(db, user, id, needed).await {
            Err(AppError::NotFound { .. }) => Err(explain_denial(db, user, id).await?),
            other => other,
        },
        Principal::Key(key) => {
            let allowed = key_on_graph(db, key, id, Role::Viewer).await?;
            if key.scope != KeyScope::Read {
                return Err(AppError::Forbidden(format!(
                    "API key `{}` may run this graph but not read it; make a key with the \
                     `read` scope",
                    key.name
                )));
            }
            allowed.at_least(needed)?;
            Ok(allowed)
        }
    }
}

/// Like [`require`], for what only people may read: a graph's triggers
/// (webhooks, schedules, widgets) carry tokens and inputs that are the
/// means to run it, so an API key, even one that may read the graph, is
/// refused (403) rather than shown them.
pub async fn require_person<'a>(
    db: &Db,
    who: impl Into<Principal<'a>>,
    id: &str,
    needed: Role,
) -> Result<Allowed, AppError> {
    match who.into() {
        Principal::Key(key) => Err(AppError::Forbidden(format!(
            "API key `{}` cannot list a graph's webhooks, schedules or widgets: they hold the \
             tokens and inputs that run it; a person signed in to Heddle can",
            key.name
        ))),
        other => require(db, other, id, needed).await,
    }
}

async fn require_user(db: &Db, user: &User, id: &str, needed: Role) -> Result<Allowed, AppError> {
    let graph = graph_id(id)?;
    let role = role(db, user, &graph)
        .await?
        .ok_or_else(|| AppError::not_found(format!("graph {graph}")))?;
    let allowed = Allowed {
        user: user.clone(),
        graph,
        role,
        trigger: None,
    };
    allowed.at_least(needed)?;
    Ok(allowed)
}

/// A key's access to a graph: 404 unless the key names it and its owner
/// can still see it; 403 unless the owner holds `owner_needs`, which a
/// key never may when it is [`Role::Owner`]. The role granted is
/// `owner_needs`.
async fn key_on_graph(
    db: &Db,
    key: &KeyGrant,
    id: &str,
    owner_needs: Role,
) -> Result<Allowed, AppError> {
    let graph = graph_id(id)?;
    let hidden = || AppError::not_found(format!("graph {graph}"));
    if !key.covers(&graph) {
        return Err(hidden());
    }
    if owner_needs > Role::Editor {
        return Err(AppError::Forbidden(format!(
            "API key `{}` may not do this: only the graph's owner, logged in, may",
            key.name
        )));
    }
    let held = role(db, &key.owner, &graph).await?.ok_or_else(hidden)?;
    if held < owner_needs {
        return Err(AppError::Forbidden(format!(
            "API key `{}` belongs to {}, who is {} of this graph; running it needs the editor \
             role",
            key.name,
            key.owner.username,
            article(held)
        )));
    }
    Ok(Allowed {
        user: key.owner.clone(),
        graph,
        role: owner_needs,
        trigger: Some(Trigger {
            origin: RunOrigin::ApiKey,
            id: key.id.clone(),
            name: key.name.clone(),
        }),
    })
}

impl Trigger {
    /// The trigger in words, e.g. ``API key `support site` ``.
    pub fn describe(&self) -> String {
        let kind = match self.origin {
            RunOrigin::App => "the app",
            RunOrigin::ApiKey => "API key",
            RunOrigin::Webhook => "webhook",
            RunOrigin::Schedule => "schedule",
            RunOrigin::Widget => "chat widget",
            RunOrigin::Experiment => "experiment",
        };
        format!("{kind} `{}`", self.name)
    }
}

/// Checks that `maker`, who set up a webhook or a schedule, may still run
/// graph `id` (an editor or the owner), and labels what it starts with
/// `trigger`: a trigger never does more than the person who made it.
pub async fn require_trigger(
    db: &Db,
    maker: &User,
    id: &str,
    trigger: Trigger,
) -> Result<Allowed, AppError> {
    let mut allowed = require_user(db, maker, id, Role::Editor).await?;
    allowed.trigger = Some(trigger);
    Ok(allowed)
}

/// Refuses (403) a change to a trigger someone else made: a webhook, a
/// schedule or a widget runs as its maker, with their secrets, so only
/// they change it (or give it a new URL); the graph's owner may also
/// delete it (`deleting`), never make it run differently.
pub fn require_maker(
    allowed: &Allowed,
    maker_id: &str,
    what: &str,
    deleting: bool,
) -> Result<(), AppError> {
    allowed.at_least(Role::Editor)?;
    let mine = allowed.user().id.as_str() == maker_id;
    if mine || (deleting && allowed.role() == Role::Owner) {
        return Ok(());
    }
    Err(AppError::Forbidden(format!(
        "this {what} runs as the person who made it: only they may change it{}",
        match allowed.role() {
            Role::Owner => " (you may delete it)",
            _ => "",
        }
    )))
}

/// Checks that the caller may start runs of graph `id`: a user needs the
/// editor role; a key must name the graph, and its owner be an editor of
/// it. What a key starts runs the published version (the runs manager
/// sees [`Allowed::key`]).
pub async fn require_to_run<'a>(
    db: &Db,
    who: impl Into<Principal<'a>>,
    id: &str,
) -> Result<Allowed, AppError> {
    match who.into() {
        Principal::Key(key) => key_on_graph(db, key, id, Role::Editor).await,
        other => require(db, other, id, Role::Editor).await,
    }
}

/// A run someone may use: found through its graph, with the role they
/// hold there. Only [`require_run`] makes one.
#[derive(Debug, Clone)]
pub struct OnRun {
    allowed: Allowed,
    run_id: RunId,
}

impl OnRun {
    /// The access decision on the run's graph.
    pub fn allowed(&self) -> &Allowed {
        &self.allowed
    }

    /// The run.
    pub fn run_id(&self) -> &RunId {
        &self.run_id
    }
}

/// A thread someone may use, as [`OnRun`] for runs. Only
/// [`require_thread`] makes one.
#[derive(Debug, Clone)]
pub struct OnThread {
    allowed: Allowed,
    thread_id: ThreadId,
}

impl OnThread {
    /// The access decision on the thread's graph.
    pub fn allowed(&self) -> &Allowed {
        &self.allowed
    }

    /// The thread.
    pub fn thread_id(&self) -> &ThreadId {
        &self.thread_id
    }
}

/// Checks that the caller holds at least `needed` on the graph of run
/// `run_id`. Runs take their graph's access: viewers read them, editors
/// start, cancel, fork and resume them. A key does to the runs it started
/// what an editor may (while its owner is an editor), and reads the
/// others only with the `read` scope. A run the caller may not see is
/// "not found", like one that does not exist.
pub async fn require_run<'a>(
    db: &Db,
    who: impl Into<Principal<'a>>,
    run_id: &RunId,
    needed: Role,
) -> Result<OnRun, AppError> {
    let who = who.into();
    if matches!(who, Principal::Nobody) {
        return Err(AppError::login_required());
    }
    let graph = belongs::graph_of_run(db, run_id).await?;
    let allowed = match who {
        Principal::Key(key) if belongs::started_run(db, &key.id, run_id).await? => {
            key_on_graph(db, key, &graph, needed).await
        }
        other => require(db, other, &graph, needed).await,
    };
    Ok(OnRun {
        allowed: hide_graph(allowed, "run", run_id.as_str())?,
        run_id: run_id.clone(),
    })
}

/// The same for a thread: a key acts on the threads its runs started.
pub async fn require_thread<'a>(
    db: &Db,
    who: impl Into<Principal<'a>>,
    thread_id: &ThreadId,
    needed: Role,
) -> Result<OnThread, AppError> {
    let who = who.into();
    if matches!(who, Principal::Nobody) {
        return Err(AppError::login_required());
    }
    let graph = belongs::graph_of_thread(db, thread_id).await?;
    let allowed = match who {
        Principal::Key(key) if belongs::started_thread(db, &key.id, thread_id).await? => {
            key_on_graph(db, key, &graph, needed).await
        }
        other => require(db, other, &graph, needed).await,
    };
    Ok(OnThread {
        allowed: hide_graph(allowed, "thread", thread_id.as_str())?,
        thread_id: thread_id.clone(),
    })
}

/// Checks that the caller may run on thread `thread_id`: one that does
/// not exist yet is theirs to start; one that does needs
/// [`require_thread`] with the editor role (for a key: a thread its runs
/// started), so that nobody continues, and so reads, a conversation they
/// may not see.
pub async fn require_thread_to_run<'a>(
    db: &Db,
    who: impl Into<Principal<'a>>,
    thread_id: &ThreadId,
) -> Result<(), AppError> {
    match belongs::thread_graph(db, thread_id).await? {
        None => Ok(()),
        Some(_) => require_thread(db, who, thread_id, Role::Editor)
            .await
            .map(|_| ()),
    }
}

/// A graph the caller may not see makes its run or thread "not found";
/// so does a key that may not read it.
fn hide_graph(
    result: Result<Allowed, AppError>,
    what: &str,
    id: &str,
) -> Result<Allowed, AppError> {
    match result {
        // Whose access to the graph ended, too, learns nothing of its runs.
        Err(AppError::NotFound { .. } | AppError::Gone(_)) => {
            Err(AppError::not_found(format!("{what} {id}")))
        }
        other => other,
    }
}

/// A graph id from a URL, or "not found" (a malformed id names nothing).
pub fn graph_id(text: &str) -> Result<GraphId, AppError> {
    GraphId::parse(text).ok_or_else(|| AppError::not_found(format!("graph {text}")))
}

/// Whether `token` names a link that works now (not revoked, not expired).
pub async fn link_is_usable(db: &Db, token: &str) -> Result<bool, AppError> {
    let found: Option<bool> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT TRUE FROM share_links WHERE token = $1 AND revoked_at IS NULL
         AND (expires_at IS NULL OR expires_at > $2)",
    )
    .bind(token)
    .bind(crate::db::now())
    .fetch_optional(pool)
    .await)?;
    Ok(found.is_some())
}

fn article(role: Role) -> String {
    match role {
        Role::Owner => "the owner".into(),
        Role::Editor => "an editor".into(),
        Role::Viewer => "a viewer".into(),
    }
}
