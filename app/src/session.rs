//! Who is logged in, as the pages see it: one resource for the whole app,
//! refetched when someone logs in or out, so the header and every page
//! agree without a reload.

use leptos::prelude::*;

use crate::accounts::{User, current_user};
use crate::error::AppError;

/// The app-wide "who is logged in" resource.
#[derive(Clone, Copy)]
pub struct SessionUser(pub Resource<Result<Option<User>, AppError>>);

/// Makes the resource and provides it to every page.
pub fn provide_session_user() {
    provide_context(SessionUser(Resource::new(|| (), |_| current_user())));
}

/// The resource (pages are always inside the app that provides it).
pub fn use_session_user() -> Option<SessionUser> {
    use_context::<SessionUser>()
}

/// Refetches who is logged in (after a log-in, sign-up or log-out).
pub fn refresh_session_user() {
    if let Some(SessionUser(user)) = use_session_user() {
        user.refetch();
    }
}
