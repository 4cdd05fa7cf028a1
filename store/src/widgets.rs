//! The `widgets` table: widgets made, changed and found by their public
//! token, with their settings checked (origins, colour).

use crate::access::Allowed;
use crate::db::Db;
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::graphs::GraphId;
use heddle_wire::widgets::{Widget, WidgetSettings};

/// The most origins one widget answers.
const MAX_ORIGINS: usize = 20;
const DEFAULT_COLOR: &str = "#4f46e5";

#[derive(sqlx::FromRow)]
struct WidgetRow {
    id: String,
    graph_id: String,
    name: String,
    token: String,
    allowed_origins: String,
    title: String,
    color: String,
    greeting: Option<String>,
    enabled: bool,
    created_by: String,
    maker: Option<String>,
    created_at: String,
}

/// `SELECT <the widget columns> FROM widgets w <rest>`, as one literal.
macro_rules! select_widgets {
    ($rest:literal) => {
        concat!(
            "SELECT w.id, w.graph_id, w.name, w.token, w.allowed_origins, w.title, w.color, ",
            "w.greeting, w.enabled, w.created_by, ",
            "(SELECT username FROM users u WHERE u.id = w.created_by) AS maker, w.created_at ",
            "FROM widgets w ",
            $rest
        )
    };
}

/// A widget as the public endpoints need it, with its maker's id.
#[derive(Debug, Clone)]
pub struct Embedded {
    pub widget: Widget,
    pub created_by: String,
}

impl WidgetRow {
    fn into_embedded(self) -> Result<Embedded, AppError> {
        let allowed_origins = serde_json::from_str(&self.allowed_origins).map_err(|_| {
            tracing::error!(widget = %self.id, "a stored widget's origins do not read back");
            AppError::Internal
        })?;
        Ok(Embedded {
            created_by: self.created_by,
            widget: Widget {
                id: self.id,
                graph_id: GraphId::from_stored(self.graph_id),
                name: self.name,
                token: self.token,
                allowed_origins,
                title: self.title,
                color: self.color,
                greeting: self.greeting,
                enabled: self.enabled,
                created_by: self.maker,
                created_at: self.created_at,
            },
        })
    }
}

/// An origin as browsers send it: `scheme://host[:port]`, nothing after.
fn check_origin(index: usize, origin: &str) -> Result<String, AppError> {
    let trimmed = origin.trim().trim_end_matches('/');
    let valid = trimmed.split_once("://").is_some_and(|(scheme, rest)| {
        matches!(scheme, "http" | "https")
            && !rest.is_empty()
            && !rest.contains(['/', '?', '#', ' ', '*'])
    });
    if !valid {
        return Err(AppError::InvalidInput(format!(
            "`allowed_origins[{index}]`: `{origin}` is not an origin (a scheme and a host, such as \
             `https://shop.example`, with no path)"
        )));
    }
    let origin = trimmed.to_ascii_lowercase();
    // Browsers leave a default port out of `Origin`; so does the list.
    let (scheme, rest) = origin.split_once("://").unwrap_or_default();
    let bracketed = rest.starts_with('[');
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) if !bracketed || host.ends_with(']') => (host, Some(port)),
        _ => (rest, None),
    };
    match port {
        None => Ok(origin.clone()),
        Some(port) => match port.parse::<u16>() {
            Ok(443) if scheme == "https" => Ok(format!("{scheme}://{host}")),
            Ok(80) if scheme == "http" => Ok(format!("{scheme}://{host}")),
            Ok(port) if port > 0 => Ok(format!("{scheme}://{host}:{port}")),
            _ => Err(AppError::InvalidInput(format!(
                "`allowed_origins[{index}]`: `{origin}` has no valid port (1 to 65535)"
            ))),
        },
    }
}

/// Checks settings; the origins as stored.
fn check(settings: &WidgetSettings) -> Result<Vec<String>, AppError> {
    let name = settings.name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(AppError::InvalidInput(
            "`name`: a widget's name is 1 to 64 characters".into(),
        ));
    }
    if settings.allowed_origins.is_empty() || settings.allowed_origins.len() > MAX_ORIGINS {
        return Err(AppError::InvalidInput(format!(
            "`allowed_origins`: a widget answers 1 to {MAX_ORIGINS} sites"
        )));
    }
    if let Some(color) = &settings.color {
        let valid = color.len() == 7
            && color.starts_with('#')
            && color[1..].chars().all(|c| c.is_ascii_hexdigit());
        if !valid {
            return Err(AppError::InvalidInput(format!(
                "`color`: `{color}` is not a colour like `#4f46e5`"
            )));
        }
    }
    for (field, text, limit) in [
        ("title", settings.title.as_deref(), 80),
        ("greeting", settings.greeting.as_deref(), 500),
    ] {
        if text.is_some_and(|text| text.chars().count() > limit) {
            return Err(AppError::InvalidInput(format!(
                "`{field}`: at most {limit} characters"
            )));
        }
    }
    settings
        .allowed_origins
        .iter()
        .enumerate()
        .map(|(index, origin)| check_origin(index, origin))
        .collect()
}

/// The title a widget shows: its own, or the graph's name.
async fn title(db: &Db, allowed: &Allowed, settings: &WidgetSettings) -> Result<String, AppError> {
    match settings.title.as_deref().map(str::trim) {
        Some(title) if !title.is_empty() => Ok(title.to_string()),
        _ => Ok(crate::graphs::get(db, allowed).await?.name),
    }
}

fn greeting(settings: &WidgetSettings) -> Option<String> {
    settings
        .greeting
        .as_deref()
        .map(str::trim)
        .filter(|greeting| !greeting.is_empty())
        .map(str::to_string)
}

/// The graph's widgets, oldest first.
pub async fn list(db: &Db, allowed: &Allowed) -> Result<Vec<Widget>, AppError> {
    let rows: Vec<WidgetRow> = on_db!(db, pool => sqlx::query_as(select_widgets!(
        "WHERE w.graph_id = $1 ORDER BY w.created_at, w.id"
    ))
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await)?;
    rows.into_iter()
        .map(|row| row.into_embedded().map(|embedded| embedded.widget))
        .collect()
}

async fn one(db: &Db, allowed: &Allowed, id: &str) -> Result<Widget, AppError> {
    Ok(embedded(db, allowed, id).await?.widget)
}

async fn embedded(db: &Db, allowed: &Allowed, id: &str) -> Result<Embedded, AppError> {
    let row: Option<WidgetRow> = on_db!(db, pool => sqlx::query_as(select_widgets!(
        "WHERE w.graph_id = $1 AND w.id = $2"
    ))
    .bind(allowed.graph().as_str())
    .bind(id)
    .fetch_optional(pool)
    .await)?;
    row.ok_or_else(|| AppError::not_found(format!("widget {id}")))?
        .into_embedded()
}

/// Makes a widget, made by the editor `allowed` names.
pub async fn create(
    db: &Db,
    allowed: &Allowed,
    settings: WidgetSettings,
) -> Result<Widget, AppError> {
    allowed.at_least(Role::Editor)?;
    let origins = check(&settings)?;
    let title = title(db, allowed, &settings).await?;
    let id = uuid::Uuid::new_v4().to_string();
    let token = format!("w_{}", uuid::Uuid::new_v4().simple());
    on_db!(db, pool => sqlx::query(
        "INSERT INTO widgets (id, graph_id, name, token, allowed_origins, title, color, greeting,
                              enabled, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&id)
    .bind(allowed.graph().as_str())
    .bind(settings.name.trim())
    .bind(&token)
    .bind(serde_json::json!(origins).to_string())
    .bind(&title)
    .bind(settings.color.as_deref().unwrap_or(DEFAULT_COLOR))
    .bind(greeting(&settings))
    .bind(settings.enabled)
    .bind(allowed.user().id.as_str())
    .bind(crate::db::now())
    .execute(pool)
    .await
    .map(|_| ()))?;
    tracing::info!(widget = %id, graph = %allowed.graph(), "chat widget made");
    one(db, allowed, &id).await
}

/// Changes a widget (its token stays, so pages embedding it go on).
pub async fn update(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    settings: WidgetSettings,
) -> Result<Widget, AppError> {
    let current = embedded(db, allowed, id).await?;
    crate::access::require_maker(allowed, &current.created_by, "chat widget", false)?;
    let origins = check(&settings)?;
    let title = title(db, allowed, &settings).await?;
    on_db!(db, pool => sqlx::query(
        "UPDATE widgets SET name = $1, allowed_origins = $2, title = $3, color = $4, greeting = $5,
                enabled = $6
         WHERE id = $7 AND graph_id = $8",
    )
    .bind(settings.name.trim())
    .bind(serde_json::json!(origins).to_string())
    .bind(&title)
    .bind(settings.color.as_deref().unwrap_or(DEFAULT_COLOR))
    .bind(greeting(&settings))
    .bind(settings.enabled)
    .bind(id)
    .bind(allowed.graph().as_str())
    .execute(pool)
    .await
    .map(|_| ()))?;
    one(db, allowed, id).await
}

/// Deletes a widget.
pub async fn delete(db: &Db, allowed: &Allowed, id: &str) -> Result<(), AppError> {
    let current = embedded(db, allowed, id).await?;
    crate::access::require_maker(allowed, &current.created_by, "chat widget", true)?;
    on_db!(db, pool => sqlx::query("DELETE FROM widgets WHERE id = $1 AND graph_id = $2")
        .bind(id)
        .bind(allowed.graph().as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}

/// The widget a public token names, if any.
pub async fn by_token(db: &Db, token: &str) -> Result<Option<Embedded>, AppError> {
    let row: Option<WidgetRow> = on_db!(db, pool => sqlx::query_as(select_widgets!(
        "WHERE w.token = $1"
    ))
    .bind(token)
    .fetch_optional(pool)
    .await)?;
    row.map(WidgetRow::into_embedded).transpose()
}

#[cfg(test)]
mod tests {
    use super::check_origin;

    #[test]
    fn origins_are_a_scheme_and_a_host_only() {
        assert_eq!(
            check_origin(0, "https://Shop.example/").unwrap(),
            "https://shop.example"
        );
        assert_eq!(
            check_origin(0, "http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            check_origin(0, "https://p.example:443").unwrap(),
            "https://p.example"
        );
        assert_eq!(
            check_origin(0, "http://q.example:80").unwrap(),
            "http://q.example"
        );
        assert!(check_origin(0, "http://q.example:99999").is_err());
        assert!(check_origin(0, "http://q.example:0").is_err());
        for bad in [
            "shop.example",
            "https://shop.example/page",
            "ftp://x",
            "https://*.example",
            "https://",
        ] {
            assert!(check_origin(0, bad).is_err(), "{bad}");
        }
    }
}
