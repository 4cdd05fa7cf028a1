//! The server side of accounts: users in SQLite, argon2 password hashes,
//! the session record, the log-in rate limit, and who is calling.
//!
//! The server's `identify` middleware reads the session once per request
//! and puts a [`Caller`] in the request's extensions; server functions and
//! API handlers read it from there.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;
use tower_sessions::Session;

use super::{MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS, User, UserId};
use crate::access::ssr::{AccessChange, AccessEvents};
use crate::error::AppError;

/// Who made a request: the logged-in user, or nobody.
#[derive(Clone, Debug, Default)]
pub struct Caller(pub Option<User>);

/// Whether anyone may create an account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignupPolicy {
    /// Anyone who reaches the server.
    Open,
    /// The first account, and people holding a valid share link.
    Closed,
}

/// Account settings and state shared by every request.
#[derive(Clone)]
pub struct Auth {
    inner: Arc<AuthInner>,
}

struct AuthInner {
    signup: SignupPolicy,
    limiter: LoginLimiter,
    events: AccessEvents,
}

impl Auth {
    pub fn new(signup: SignupPolicy) -> Self {
        Auth {
            inner: Arc::new(AuthInner {
                signup,
                limiter: LoginLimiter::default(),
                events: AccessEvents::default(),
            }),
        }
    }

    pub fn signup_open(&self) -> bool {
        self.inner.signup == SignupPolicy::Open
    }

    /// Where access changes are announced (to open websockets).
    pub fn events(&self) -> &AccessEvents {
        &self.inner.events
    }
}

/// The request's [`Auth`], provided by the server.
pub fn auth() -> Result<Auth, AppError> {
    leptos::prelude::use_context::<Auth>().ok_or_else(|| {
        tracing::error!("no auth settings in the request context");
        AppError::Internal
    })
}

fn request_parts() -> Option<http::request::Parts> {
    leptos::prelude::use_context::<http::request::Parts>()
}

/// Who is calling the server function or rendering the page.
pub fn caller() -> Option<User> {
    request_parts()?.extensions.get::<Caller>()?.0.clone()
}

/// The caller, or 401.
pub fn require_user() -> Result<User, AppError> {
    caller().ok_or_else(AppError::login_required)
}

fn session() -> Result<Session, AppError> {
    request_parts()
        .and_then(|parts| parts.extensions.get::<Session>().cloned())
        .ok_or_else(|| {
            tracing::error!("no session in the request; is the session layer installed?");
            AppError::Internal
        })
}

/// What a session remembers: whose it is, and the password epoch it was
/// made in (a password change ends older sessions).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SessionUser {
    id: String,
    epoch: i64,
}

const SESSION_KEY: &str = "user";

fn session_error(error: tower_sessions::session::Error) -> AppError {
    tracing::error!(%error, "session store error");
    AppError::Internal
}

/// The user a session belongs to, if it is still valid.
pub async fn session_user(pool: &SqlitePool, session: &Session) -> Result<Option<User>, AppError> {
    let Some(saved) = session
        .get::<SessionUser>(SESSION_KEY)
        .await
        .map_err(session_error)?
    else {
        return Ok(None);
    };
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT id, username FROM users WHERE id = ? AND session_epoch = ?")
            .bind(&saved.id)
            .bind(saved.epoch)
            .fetch_optional(pool)
            .await?;
    Ok(row.map(|(id, username)| User {
        id: UserId(id),
        username,
    }))
}

/// A user by id (`None` when the account is gone).
pub async fn user_by_id(pool: &SqlitePool, id: &str) -> Result<Option<User>, AppError> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT id, username FROM users WHERE id = ?")
            .bind(id)
            .fetch_optional(pool)
            .await?;
    Ok(row.map(|(id, username)| User {
        id: UserId(id),
        username,
    }))
}

/// How many accounts exist.
pub async fn user_count(pool: &SqlitePool) -> Result<i64, AppError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM users")
        .fetch_one(pool)
        .await?)
}

/// A user by name (case-insensitive).
pub async fn find_user(pool: &SqlitePool, username: &str) -> Result<Option<User>, AppError> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT id, username FROM users WHERE username = ?")
            .bind(username.trim())
            .fetch_optional(pool)
            .await?;
    Ok(row.map(|(id, username)| User {
        id: UserId(id),
        username,
    }))
}

fn check_username(username: &str) -> Result<&str, AppError> {
    let username = username.trim();
    let valid = (1..=64).contains(&username.chars().count())
        && username
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(username)
    } else {
        Err(AppError::InvalidInput(
            "a username is 1 to 64 letters, digits, `-`, `_` or `.`".into(),
        ))
    }
}

fn check_password(password: &str) -> Result<(), AppError> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD_CHARS {
        return Err(AppError::InvalidInput(format!(
            "a password needs at least {MIN_PASSWORD_CHARS} characters"
        )));
    }
    if chars > MAX_PASSWORD_CHARS {
        return Err(AppError::InvalidInput(format!(
            "a password may have at most {MAX_PASSWORD_CHARS} characters"
        )));
    }
    Ok(())
}

/// An argon2id hash of `password` (off the async threads: it is slow on
/// purpose).
async fn hash_password(password: &str) -> Result<String, AppError> {
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || {
        Argon2::default()
            .hash_password(password.as_bytes())
            .map(|hash| hash.to_string())
    })
    .await
    .map_err(|error| {
        tracing::error!(%error, "the password hashing task failed");
        AppError::Internal
    })?
    .map_err(|error| {
        tracing::error!(%error, "cannot hash a password");
        AppError::Internal
    })
}

/// Whether `password` matches `hash` (a stored PHC string).
async fn verify_password(password: &str, hash: &str) -> Result<bool, AppError> {
    let password = password.to_owned();
    let hash = hash.to_owned();
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
    .map_err(|error| {
        tracing::error!(%error, "the password check task failed");
        AppError::Internal
    })
}

/// Creates an account. The first one also takes ownership of graphs made
/// before accounts existed.
pub async fn create_user(
    pool: &SqlitePool,
    username: &str,
    password: &str,
) -> Result<User, AppError> {
    let username = check_username(username)?;
    check_password(password)?;
    let hash = hash_password(password).await?;
    let id = uuid::Uuid::new_v4().to_string();
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let taken: Option<String> = sqlx::query_scalar("SELECT id FROM users WHERE username = ?")
        .bind(username)
        .fetch_optional(&mut *tx)
        .await?;
    if taken.is_some() {
        return Err(AppError::InvalidInput(format!(
            "the username `{username}` is taken"
        )));
    }
    let first = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM users")
        .fetch_one(&mut *tx)
        .await?
        == 0;
    sqlx::query("INSERT INTO users (id, username, password_hash) VALUES (?, ?, ?)")
        .bind(&id)
        .bind(username)
        .bind(&hash)
        .execute(&mut *tx)
        .await?;
    if first {
        sqlx::query("UPDATE graphs SET owner_id = ? WHERE owner_id IS NULL")
            .bind(&id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    tracing::info!(user = %id, %username, first, "account created");
    Ok(User {
        id: UserId(id),
        username: username.to_string(),
    })
}

/// Checks a username and password (rate limited per username).
pub async fn authenticate(
    pool: &SqlitePool,
    auth: &Auth,
    username: &str,
    password: &str,
) -> Result<User, AppError> {
    let key = username.trim().to_lowercase();
    auth.inner.limiter.check(&key)?;
    let row: Option<(String, String, String)> =
        sqlx::query_as("SELECT id, username, password_hash FROM users WHERE username = ?")
            .bind(username.trim())
            .fetch_optional(pool)
            .await?;
    let matches = match &row {
        Some((_, _, hash)) => verify_password(password, hash).await?,
        // Hash anyway, so a log-in takes as long whether the name exists
        // or not.
        None => {
            hash_password(password).await?;
            false
        }
    };
    match row {
        Some((id, username, _)) if matches => {
            auth.inner.limiter.forget(&key);
            Ok(User {
                id: UserId(id),
                username,
            })
        }
        _ => {
            auth.inner.limiter.fail(&key);
            Err(AppError::Unauthorized("wrong username or password".into()))
        }
    }
}

/// Makes `session` belong to `user`, under a new session id (so an id
/// planted before the log-in is worthless after it).
pub async fn start_session(
    pool: &SqlitePool,
    session: &Session,
    user: &User,
) -> Result<(), AppError> {
    let epoch: i64 = sqlx::query_scalar("SELECT session_epoch FROM users WHERE id = ?")
        .bind(user.id.as_str())
        .fetch_one(pool)
        .await?;
    session.cycle_id().await.map_err(session_error)?;
    session
        .insert(
            SESSION_KEY,
            SessionUser {
                id: user.id.0.clone(),
                epoch,
            },
        )
        .await
        .map_err(session_error)
}

/// Ends `session` on the server, and tells open websockets.
pub async fn end_session(auth: &Auth, session: &Session) -> Result<(), AppError> {
    session.flush().await.map_err(session_error)?;
    auth.events().announce(AccessChange::Sessions);
    Ok(())
}

/// Signs up: checks the policy, creates the account, starts its session.
pub async fn sign_up(
    pool: &SqlitePool,
    auth: &Auth,
    session: &Session,
    username: &str,
    password: &str,
    invite: Option<&str>,
) -> Result<User, AppError> {
    if !auth.signup_open() && user_count(pool).await? > 0 {
        let invited = match invite {
            Some(token) => crate::sharing::ssr::link_is_usable(pool, token).await?,
            None => false,
        };
        if !invited {
            return Err(AppError::Forbidden(
                "sign-up is closed on this server; ask a graph's owner for a share link".into(),
            ));
        }
    }
    let user = create_user(pool, username, password).await?;
    start_session(pool, session, &user).await?;
    Ok(user)
}

/// Changes `user`'s password after checking the current one. Every other
/// session of the user ends; `session` (the caller's) stays logged in.
pub async fn change_password(
    pool: &SqlitePool,
    auth: &Auth,
    session: &Session,
    user: &User,
    current: &str,
    new: &str,
) -> Result<(), AppError> {
    authenticate(pool, auth, &user.username, current)
        .await
        .map_err(|error| match error {
            AppError::Unauthorized(_) => {
                AppError::InvalidInput("the current password is wrong".into())
            }
            other => other,
        })?;
    check_password(new)?;
    let hash = hash_password(new).await?;
    sqlx::query(
        "UPDATE users SET password_hash = ?, session_epoch = session_epoch + 1 WHERE id = ?",
    )
    .bind(&hash)
    .bind(user.id.as_str())
    .execute(pool)
    .await?;
    start_session(pool, session, user).await?;
    auth.events().announce(AccessChange::Sessions);
    tracing::info!(user = %user.id.as_str(), "password changed");
    Ok(())
}

/// The server functions' versions: pool, settings and session from the
/// request context.
pub(super) async fn log_in_here(username: &str, password: &str) -> Result<User, AppError> {
    let pool = crate::graphs::ssr::pool()?;
    let user = authenticate(&pool, &auth()?, username, password).await?;
    start_session(&pool, &session()?, &user).await?;
    Ok(user)
}

pub(super) async fn sign_up_here(
    username: &str,
    password: &str,
    invite: Option<&str>,
) -> Result<User, AppError> {
    let pool = crate::graphs::ssr::pool()?;
    sign_up(&pool, &auth()?, &session()?, username, password, invite).await
}

pub(super) async fn log_out_here() -> Result<(), AppError> {
    end_session(&auth()?, &session()?).await
}

pub(super) async fn change_password_here(current: &str, new: &str) -> Result<(), AppError> {
    let user = require_user()?;
    let pool = crate::graphs::ssr::pool()?;
    change_password(&pool, &auth()?, &session()?, &user, current, new).await
}

/// Failed log-ins per username: at most [`LoginLimiter::MAX_FAILURES`] in
/// [`LoginLimiter::WINDOW`]; then 429 until the oldest failure ages out.
#[derive(Default)]
struct LoginLimiter {
    failures: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl LoginLimiter {
    const MAX_FAILURES: usize = 5;
    const WINDOW: Duration = Duration::from_secs(60);

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<Instant>>> {
        self.failures.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check(&self, key: &str) -> Result<(), AppError> {
        let now = Instant::now();
        let mut entries = self.entries();
        let Some(times) = entries.get_mut(key) else {
            return Ok(());
        };
        while times
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Self::WINDOW)
        {
            times.pop_front();
        }
        match times.front() {
            Some(oldest) if times.len() >= Self::MAX_FAILURES => {
                let wait = Self::WINDOW.saturating_sub(now.duration_since(*oldest));
                Err(AppError::TooManyRequests(format!(
                    "too many failed log-ins for this username; try again in {} s",
                    wait.as_secs().max(1)
                )))
            }
            _ => Ok(()),
        }
    }

    fn fail(&self, key: &str) {
        let mut entries = self.entries();
        // Bounded memory: forget everyone when the table grows huge.
        if entries.len() > 100_000 {
            entries.clear();
        }
        entries
            .entry(key.to_string())
            .or_default()
            .push_back(Instant::now());
    }

    fn forget(&self, key: &str) {
        self.entries().remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::{LoginLimiter, check_password, check_username};

    #[test]
    fn usernames_and_passwords_are_checked() {
        assert_eq!(check_username("  ada.l-1 ").ok(), Some("ada.l-1"));
        assert!(check_username("").is_err());
        assert!(check_username("a b").is_err());
        assert!(check_username(&"x".repeat(65)).is_err());
        assert!(check_password("short").is_err());
        assert!(check_password("long enough").is_ok());
    }

    #[test]
    fn the_limiter_refuses_after_five_failures() {
        let limiter = LoginLimiter::default();
        for _ in 0..LoginLimiter::MAX_FAILURES {
            assert!(limiter.check("ada").is_ok());
            limiter.fail("ada");
        }
        assert!(limiter.check("ada").is_err());
        assert!(limiter.check("bob").is_ok());
        limiter.forget("ada");
        assert!(limiter.check("ada").is_ok());
    }
}
