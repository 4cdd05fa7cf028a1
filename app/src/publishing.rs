//! The server functions for publishing a version, and the graph page's view of what is live.
//!
//! What they send and answer is [`heddle_wire::publishing`] (re-exported here, so
//! the UI names it `crate::publishing::…`); the rows and rules are
//! `heddle_store::publishing`, which a server function calls after reading its
//! request (`crate::request`).

#[cfg(feature = "ssr")]
use heddle_store::publishing as store;
pub use heddle_wire::publishing::*;
use leptos::prelude::*;

#[cfg(feature = "ssr")]
use crate::access::Role;
use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// The graph's live version, if it has one (viewers and up).
#[server(endpoint = "publication")]
pub async fn get_publication(graph_id: String) -> Result<Option<Publication>, AppError> {
    let (db, allowed) = crate::request::require_here(&graph_id, Role::Viewer).await?;
    with_error_status(store::publication(&db, &allowed).await)
}

/// Makes `version` the graph's live version (editors and owners).
#[server(endpoint = "publish_version")]
pub async fn publish_version(graph_id: String, version: i64) -> Result<Publication, AppError> {
    let (db, allowed) = crate::request::require_here(&graph_id, Role::Editor).await?;
    with_error_status(store::publish(&db, &allowed, version).await)
}

/// Takes the graph offline: calls from outside are refused until a
/// version is published again (editors and owners).
#[server(endpoint = "unpublish_graph")]
pub async fn unpublish_graph(graph_id: String) -> Result<(), AppError> {
    let (db, allowed) = crate::request::require_here(&graph_id, Role::Editor).await?;
    with_error_status(store::unpublish(&db, &allowed).await)
}

/// The graph page's view of its publication, shared by the graph bar and
/// the version history: loaded with the page, loaded again after each
/// change made here.
#[derive(Clone, Copy)]
pub struct Live {
    graph_id: StoredValue<String>,
    changed: RwSignal<u32>,
    pub publication: Resource<Result<Option<Publication>, AppError>>,
    /// Why the last change failed.
    pub error: RwSignal<Option<String>>,
    /// Whether a change is on its way.
    pub pending: RwSignal<bool>,
}

/// The published version in what the server answered, if it answered.
fn live_version(loaded: Option<&Result<Option<Publication>, AppError>>) -> Option<i64> {
    loaded
        .and_then(|result| result.as_ref().ok())
        .and_then(Option::as_ref)
        .map(|publication| publication.version)
}
impl Live {
    pub fn new(graph_id: String) -> Self {
        let changed = RwSignal::new(0u32);
        let id = graph_id.clone();
        let publication =
            Resource::new(move || changed.get(), move |_| get_publication(id.clone()));
        Live {
            graph_id: StoredValue::new(graph_id),
            changed,
            publication,
            error: RwSignal::new(None),
            pending: RwSignal::new(false),
        }
    }

    /// The live version, once loaded.
    pub fn version(&self) -> Option<i64> {
        self.publication
            .with(|loaded| live_version(loaded.as_ref()))
    }

    /// The live version, read without tracking.
    pub fn version_untracked(&self) -> Option<i64> {
        self.publication
            .with_untracked(|loaded| live_version(loaded.as_ref()))
    }

    /// Makes `version` live.
    pub fn publish(self, version: i64) {
        self.change(async move {
            publish_version(self.graph_id.get_value(), version)
                .await
                .map(|_| ())
        });
    }

    /// Takes the graph offline.
    pub fn unpublish(self) {
        self.change(async move { unpublish_graph(self.graph_id.get_value()).await });
    }

    fn change(self, call: impl Future<Output = Result<(), AppError>> + 'static) {
        self.pending.set(true);
        self.error.set(None);
        leptos::task::spawn_local(async move {
            if let Err(failure) = call.await {
                self.error.set(Some(failure.to_string()));
            }
            self.pending.set(false);
            self.changed.update(|n| *n += 1);
        });
    }
}
