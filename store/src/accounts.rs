//! The server side of accounts: users in the database, argon2 password hashes,
//! the session record, the log-in guard (rate limits and the hashing
//! queue, in [`login_guard`]), unique usernames ([`username`]), and who is
//! calling.
//!
//! The server's `identify` middleware reads the session once per request
//! and puts a [`Caller`] in the request's extensions; server functions and
//! API handlers read it from there.

mod login_guard;
mod password;
pub mod shared_limit;
mod username;

use std::net::IpAddr;
use std::sync::Arc;

use crate::db::{Db, WritePool};
use crate::on_db;
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use crate::access_events::{AccessChange, AccessEvents};
use heddle_wire::AppError;
use heddle_wire::accounts::{MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS, User, UserId};
pub use login_guard::LoginGuard;
use username::display_form;
pub use username::username_key;

/// The longest a username may be, in characters.
const MAX_USERNAME_CHARS: usize = 64;

/// Whether anyone may create an account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignupPolicy {
    /// Anyone who reaches the server.
    Open,
    /// The first account, and people holding a valid share link.
    Closed,
}

/// The address a request came from (the peer, or the proxy's forwarded
/// client when the server is told to trust it); `None` when unknown.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientAddress(pub Option<IpAddr>);

/// Account settings and state shared by every request.
#[derive(Clone)]
pub struct Auth {
    inner: Arc<AuthInner>,
}

struct AuthInner {
    signup: SignupPolicy,
    guard: LoginGuard,
    events: AccessEvents,
}

impl Auth {
    /// The settings for the servers on `db` (access changes are announced
    /// to all of them).
    pub fn new(signup: SignupPolicy, db: &Db) -> Self {
        Auth {
            inner: Arc::new(AuthInner {
                signup,
                guard: LoginGuard::default(),
                events: AccessEvents::on(db),
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
pub async fn session_user(db: &Db, session: &Session) -> Result<Option<User>, AppError> {
    let Some(saved) = session
        .get::<SessionUser>(SESSION_KEY)
        .await
        .map_err(session_error)?
    else {
        return Ok(None);
    };
    let row: Option<(String, String)> = on_db!(db, pool => sqlx::query_as("SELECT id, username FROM users WHERE id = $1 AND session_epoch = $2")
            .bind(&saved.id)
            .bind(saved.epoch)
            .fetch_optional(pool)
            .await)?;
    Ok(row.map(|(id, username)| User {
        id: UserId::from_stored(id),
        username,
    }))
}

/// A user by id (`None` when the account is gone).
pub async fn user_by_id(db: &Db, id: &str) -> Result<Option<User>, AppError> {
    let row: Option<(String, String)> = on_db!(db, pool => sqlx::query_as("SELECT id, username FROM users WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await)?;
    Ok(row.map(|(id, username)| User {
        id: UserId::from_stored(id),
        username,
    }))
}

/// How many accounts exist.
pub async fn user_count(db: &Db) -> Result<i64, AppError> {
    Ok(
        on_db!(db, pool => sqlx::query_scalar("SELECT COUNT(*) FROM users")
        .fetch_one(pool)
        .await)?,
    )
}

/// A user by name (in its unique form: case and look-alikes aside).
pub async fn find_user(db: &Db, username: &str) -> Result<Option<User>, AppError> {
    let row: Option<(String, String)> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, username FROM users
         WHERE username_key = $1 OR (username_key IS NULL AND username = $2)",
    )
    .bind(username_key(username))
    .bind(username.trim())
    .fetch_optional(pool)
    .await)?;
    Ok(row.map(|(id, username)| User {
        id: UserId::from_stored(id),
        username,
    }))
}

fn check_username(username: &str) -> Result<&str, AppError> {
    let username = username.trim();
    let valid = (1..=MAX_USERNAME_CHARS).contains(&username.chars().count())
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

/// An argon2id hash of `password`, computed in the guard's hashing queue
/// (off the async threads: it is slow on purpose).
async fn hash_password(guard: &LoginGuard, password: &str) -> Result<String, AppError> {
    let password = password.to_owned();
    guard
        .hash(move || password::hash(&password))
        .await?
        .map_err(|error| {
            tracing::error!(%error, "cannot hash a password");
            AppError::Internal
        })
}

/// Whether `password` matches `hash` (a stored PHC string).
async fn verify_password(guard: &LoginGuard, password: &str, hash: &str) -> Result<bool, AppError> {
    let password = password.to_owned();
    let hash = hash.to_owned();
    guard.hash(move || password::verify(&password, &hash)).await
}

/// Creates an account. The first one also takes ownership of graphs made
/// before accounts existed.
pub async fn create_user(
    db: &Db,
    auth: &Auth,
    username: &str,
    password: &str,
) -> Result<User, AppError> {
    let typed = check_username(username)?;
    let username = display_form(typed);
    let key = username_key(&username);
    check_password(password)?;
    let hash = hash_password(&auth.inner.guard, password).await?;
    let id = uuid::Uuid::new_v4().to_string();
    let first = on_db!(db, pool => {
        let mut tx = pool.begin_write("accounts").await?;
        // Unique in its normalised form: a look-alike of a name is that name.
        let taken: Option<String> =
            sqlx::query_scalar("SELECT id FROM users WHERE username_key = $1 OR username = $2")
                .bind(&key)
                .bind(&username)
                .fetch_optional(&mut *tx)
                .await?;
        if taken.is_some() {
            return Err(AppError::InvalidInput(format!(
                "the username `{typed}` is taken"
            )));
        }
        let first = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM users")
            .fetch_one(&mut *tx)
            .await?
            == 0;
        sqlx::query(
            "INSERT INTO users (id, username, username_key, password_hash) VALUES ($1, $2, $3, $4)",
        )
        .bind(&id)
        .bind(&username)
        .bind(&key)
        .bind(&hash)
        .execute(&mut *tx)
        .await?;
        if first {
            sqlx::query("UPDATE graphs SET owner_id = $1 WHERE owner_id IS NULL")
                .bind(&id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok::<_, AppError>(first)
    })?;
    tracing::info!(user = %id, %username, first, "account created");
    Ok(User {
        id: UserId::from_stored(id),
        username,
    })
}

/// Checks a username and password. Each attempt is counted against the
/// client's address and the account before the password is looked at.
pub async fn authenticate(
    db: &Db,
    auth: &Auth,
    client: Option<IpAddr>,
    username: &str,
    password: &str,
) -> Result<User, AppError> {
    // No account has a longer name: such a log-in is refused without a
    // look-up, and its text never becomes a key in the limiter's table.
    let too_long = username.trim().chars().count() > MAX_USERNAME_CHARS;
    let key = if too_long {
        String::new()
    } else {
        username_key(username)
    };
    let guard = &auth.inner.guard;
    guard.attempt(db, client, &key).await?;
    if too_long {
        return Err(AppError::Unauthorized("wrong username or password".into()));
    }
    let row: Option<(String, String, String)> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, username, password_hash FROM users
         WHERE username_key = $1 OR (username_key IS NULL AND username = $2)",
    )
    .bind(&key)
    .bind(username.trim())
    .fetch_optional(pool)
    .await)?;
    let matches = match &row {
        Some((_, _, hash)) => verify_password(guard, password, hash).await?,
        // Hash anyway, so a log-in takes as long whether the name exists
        // or not.
        None => {
            hash_password(guard, password).await?;
            false
        }
    };
    match row {
        Some((id, username, _)) if matches => Ok(User {
            id: UserId::from_stored(id),
            username,
        }),
        _ => Err(AppError::Unauthorized("wrong username or password".into())),
    }
}

/// Gives accounts made before usernames had a unique form their key (at
/// start). Two older accounts that are look-alikes keep working by their
/// exact names; the second is logged, and only the first gets the key.
pub async fn fill_username_keys(db: &Db) -> Result<(), AppError> {
    let rows: Vec<(String, String)> = on_db!(db, pool => sqlx::query_as("SELECT id, username FROM users WHERE username_key IS NULL")
            .fetch_all(pool)
            .await)?;
    for (id, username) in rows {
        let filled = on_db!(db, pool => sqlx::query("UPDATE users SET username_key = $1 WHERE id = $2")
            .bind(username_key(&username))
            .bind(&id)
            .execute(pool)
            .await
        .map(|done| done.rows_affected()));
        if let Err(error) = filled {
            tracing::warn!(user = %id, %username, %error, "an older account's name is a look-alike of another's");
        }
    }
    Ok(())
}

/// Makes `session` belong to `user`, under a new session id (so an id
/// planted before the log-in is worthless after it).
pub async fn start_session(db: &Db, session: &Session, user: &User) -> Result<(), AppError> {
    let epoch: i64 = on_db!(db, pool => sqlx::query_scalar("SELECT session_epoch FROM users WHERE id = $1")
        .bind(user.id.as_str())
        .fetch_one(pool)
        .await)?;
    session.cycle_id().await.map_err(session_error)?;
    session
        .insert(
            SESSION_KEY,
            SessionUser {
                id: user.id.as_str().to_owned(),
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
    db: &Db,
    auth: &Auth,
    session: &Session,
    username: &str,
    password: &str,
    invite: Option<&str>,
) -> Result<User, AppError> {
    if !auth.signup_open() && user_count(db).await? > 0 {
        let invited = match invite {
            Some(token) => crate::access::link_is_usable(db, token).await?,
            None => false,
        };
        if !invited {
            return Err(AppError::Forbidden(
                "sign-up is closed on this server; ask a graph's owner for a share link".into(),
            ));
        }
    }
    let user = create_user(db, auth, username, password).await?;
    start_session(db, session, &user).await?;
    Ok(user)
}

/// Changes `user`'s password after checking the current one. Every other
/// session of the user ends; `session` (the caller's) stays logged in.
pub async fn change_password(
    db: &Db,
    auth: &Auth,
    client: Option<IpAddr>,
    session: &Session,
    user: &User,
    current: &str,
    new: &str,
) -> Result<(), AppError> {
    authenticate(db, auth, client, &user.username, current)
        .await
        .map_err(|error| match error {
            AppError::Unauthorized(_) => {
                AppError::InvalidInput("the current password is wrong".into())
            }
            other => other,
        })?;
    check_password(new)?;
    let hash = hash_password(&auth.inner.guard, new).await?;
    on_db!(db, pool => sqlx::query(
        "UPDATE users SET password_hash = $1, session_epoch = session_epoch + 1 WHERE id = $2",
    )
    .bind(&hash)
    .bind(user.id.as_str())
    .execute(pool)
    .await
        .map(|done| done.rows_affected()))?;
    start_session(db, session, user).await?;
    auth.events().announce(AccessChange::Sessions);
    tracing::info!(user = %user.id.as_str(), "password changed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{check_password, check_username};

    #[test]
    fn usernames_and_passwords_are_checked() {
        assert_eq!(check_username("  ada.l-1 ").ok(), Some("ada.l-1"));
        assert!(check_username("").is_err());
        assert!(check_username("a b").is_err());
        assert!(check_username(&"x".repeat(65)).is_err());
        assert!(check_password("short").is_err());
        assert!(check_password("long enough").is_ok());
    }
}
