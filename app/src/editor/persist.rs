//! Keeping work safe. Every committed change is written to the browser's
//! storage (a draft that survives a reload or a closed tab) as soon as the
//! page is idle, and at once when the page is hidden or left; and saved
//! to the server 800 ms after the last one, naming the version it was
//! based on. (Writing a 500-node draft takes a frame's worth of time:
//! done in the frame that drops a dragged node, it made that frame late.)
//! A save refused because a teammate saved first is a conflict: shown
//! with a choice (reload theirs, or keep mine as a copy), never
//! overwritten. Leaving with unsaved changes asks first.

use heddle_engine::GraphDocument;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::state::Editor;

/// Where the editor's work stands.
#[derive(Clone, Debug, PartialEq)]
pub enum SaveState {
    Saved,
    /// Changed; the save is coming.
    Unsaved,
    Saving,
    /// Someone saved version `theirs` first; nothing is saved until the
    /// user chooses.
    Conflict {
        theirs: i64,
    },
    /// The last save failed; the draft is kept and the next change retries.
    Failed(String),
}

impl SaveState {
    pub fn label(&self) -> String {
        match self {
            SaveState::Saved => "Saved".into(),
            SaveState::Unsaved => "Unsaved changes".into(),
            SaveState::Saving => "Saving…".into(),
            SaveState::Conflict { theirs } => format!("Conflict with version {theirs}"),
            SaveState::Failed(message) => format!("Not saved: {message}"),
        }
    }
}

/// A draft in the browser's storage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Draft {
    pub base_version: i64,
    pub document: GraphDocument,
}

/// The saving machinery of one open graph. (On the server it only holds
/// the version: saving happens in the browser.)
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub struct Persistence {
    pub status: RwSignal<SaveState>,
    pub version: RwSignal<i64>,
    /// A field of the inspector is being typed in and has not applied
    /// its text yet (typing.rs): the bar says so.
    pub typing: RwSignal<bool>,
    graph_id: StoredValue<String>,
    /// Moves on with every scheduled save; a timer whose number is stale
    /// does nothing.
    pending: StoredValue<u64>,
    /// Where the draft stands against the newest change.
    draft: StoredValue<DraftWrite>,
    /// The editor's revision that `version` holds.
    saved_revision: StoredValue<u64>,
    /// A save is on its way to the server. Not the status, which a change
    /// made meanwhile sets to "Unsaved": a second save started then went
    /// out on the same base version as the first, and came back a
    /// conflict with oneself (the edit it held not saved).
    in_flight: StoredValue<bool>,
    editor: Editor,
}

/// Where writing the draft stands. It is written in two idle moments, each
/// well under a frame on a 500-node graph: the document is serialized in
/// one, stored in the next.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum DraftWrite {
    /// The draft holds the newest change (or there is none to hold).
    Written,
    /// A change is not in the draft; a step is scheduled.
    Due,
    /// Serialized, to be stored at the next step.
    Serialized(String),
}

/// The room an idle moment needs for one step of writing the draft: each
/// takes 1 to 9 ms on a 500-node graph.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
const DRAFT_STEP_MS: f64 = 10.0;

/// The storage key of a graph's draft.
pub fn draft_key(graph_id: &str) -> String {
    format!("heddle.draft.{graph_id}")
}

/// How long after the last change the save goes out.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
const DEBOUNCE_MS: u64 = 800;

impl Persistence {
    pub fn new(editor: Editor, graph_id: String, version: i64) -> Persistence {
        Persistence {
            status: RwSignal::new(SaveState::Saved),
            version: RwSignal::new(version),
            typing: RwSignal::new(false),
            graph_id: StoredValue::new(graph_id),
            pending: StoredValue::new(0),
            draft: StoredValue::new(DraftWrite::Written),
            saved_revision: StoredValue::new(editor.revision.get_untracked()),
            in_flight: StoredValue::new(false),
            editor,
        }
    }

    /// The saved version that holds exactly what the editor shows, for a
    /// run to name: edits not saved yet are saved now (not after the
    /// debounce), and a save in flight is waited for. An error says why
    /// nothing can run as shown: a conflict, a failed save.
    pub async fn saved_version(self) -> Result<i64, String> {
        #[cfg(feature = "hydrate")]
        {
            // A save takes a round trip; 30 s of waiting is a dead server.
            for _ in 0..1200 {
                match self.status.get_untracked() {
                    SaveState::Conflict { theirs } => {
                        return Err(format!(
                            "Not started: version {theirs} was saved by someone else meanwhile; \
                             reload theirs or keep yours as a copy, then run again"
                        ));
                    }
                    SaveState::Saving
                    | SaveState::Saved
                    | SaveState::Unsaved
                    | SaveState::Failed(_) => {}
                }
                // A save out (its status may say "Unsaved" since: a change
                // came meanwhile) is waited for.
                if self.in_flight.try_get_value().unwrap_or(false) {
                    pause_ms(25).await;
                    continue;
                }
                if self.editor.revision.get_untracked() == self.saved_revision.get_value() {
                    return Ok(self.version.get_untracked());
                }
                // Saved now: the debounced save would only save it again.
                self.pending.update_value(|n| *n += 1);
                self.save().await;
                if let SaveState::Failed(message) = self.status.get_untracked() {
                    return Err(format!(
                        "Not started: the graph could not be saved ({message})"
                    ));
                }
            }
            Err("Not started: the graph is still being saved; try again in a moment".into())
        }
        #[cfg(not(feature = "hydrate"))]
        Ok(self.version.get_untracked())
    }

    /// Saves now what the editor shows (Ctrl+S), not after the debounce;
    /// the bar says how it went. Nothing for one who cannot edit.
    pub fn save_now(self) {
        if !self.editor.can_edit {
            return;
        }
        leptos::task::spawn_local(async move {
            // A conflict or a failure is shown in the bar, as for any save.
            let _ = self.saved_version().await;
        });
    }

    /// Starts following the editor (in the browser): restores a draft left
    /// by a reload or a closed tab, and saves changes as they come.
    pub fn start(self) {
        #[cfg(feature = "hydrate")]
        {
            let editor = self.editor;
            // Effects run once the page is hydrated: only then may a draft
            // change what the server rendered.
            Effect::new(move |previous: Option<u64>| {
                let revision = editor.revision.get();
                match previous {
                    None => {
                        if self.restore_draft() {
                            self.changed();
                        }
                        editor.revision.get_untracked()
                    }
                    Some(previous) => {
                        if previous != revision {
                            self.changed();
                        }
                        revision
                    }
                }
            });
            self.guard_unload();
            self.flush_draft_when_hidden();
            super::typing::follow(self.typing);
        }
    }

    #[cfg(feature = "hydrate")]
    fn storage() -> Option<web_sys::Storage> {
        window().local_storage().ok().flatten()
    }

    /// Brings back a draft a reload or a closed tab left; `true` when it
    /// did (and it is to be saved).
    #[cfg(feature = "hydrate")]
    fn restore_draft(self) -> bool {
        let key = draft_key(&self.graph_id.get_value());
        let Some(draft) = Self::storage()
            .and_then(|storage| storage.get_item(&key).ok().flatten())
            .and_then(|text| serde_json::from_str::<Draft>(&text).ok())
        else {
            return false;
        };
        if draft.document == self.editor.document() {
            if let Some(storage) = Self::storage() {
                let _ = storage.remove_item(&key);
            }
            return false;
        }
        let version = self.version.get_untracked();
        let base = draft.base_version;
        self.editor
            .change(move |document| *document = draft.document);
        if base != version {
            // The draft was made on an older version: do not save it over
            // the newer one; let the user choose.
            self.status.set(SaveState::Conflict { theirs: version });
            return false;
        }
        true
    }

    #[cfg(feature = "hydrate")]
    fn changed(self) {
        let scheduled = self.draft.with_value(|draft| *draft != DraftWrite::Written);
        self.draft.set_value(DraftWrite::Due);
        if !scheduled {
            super::idle::when_idle(DRAFT_STEP_MS, 2_000, move || self.draft_step());
        }
        if matches!(self.status.get_untracked(), SaveState::Conflict { .. }) {
            return;
        }
        self.status.set(SaveState::Unsaved);
        self.pending.update_value(|n| *n += 1);
        let ticket = self.pending.get_value();
        set_timeout(
            move || {
                if self.pending.try_get_value() == Some(ticket) {
                    leptos::task::spawn_local(self.save());
                }
            },
            std::time::Duration::from_millis(DEBOUNCE_MS),
        );
    }

    /// The draft serialized as it stands now.
    #[cfg(feature = "hydrate")]
    fn draft_text(self) -> Option<String> {
        serde_json::to_string(&Draft {
            base_version: self.version.get_untracked(),
            document: self.editor.document(),
        })
        .ok()
    }

    #[cfg(feature = "hydrate")]
    fn store_draft(self, text: &str) {
        if let Some(storage) = Self::storage() {
            let _ = storage.set_item(&draft_key(&self.graph_id.get_value()), text);
        }
    }

    /// One idle moment's part of writing the draft: serializing it, or
    /// storing what was serialized (unless a change came in between).
    #[cfg(feature = "hydrate")]
    fn draft_step(self) {
        match self.draft.try_get_value() {
            Some(DraftWrite::Due) => {
                let next = self
                    .draft_text()
                    .map_or(DraftWrite::Written, DraftWrite::Serialized);
                let more = next != DraftWrite::Written;
                self.draft.set_value(next);
                if more {
                    super::idle::when_idle(DRAFT_STEP_MS, 2_000, move || self.draft_step());
                }
            }
            Some(DraftWrite::Serialized(text)) => {
                self.store_draft(&text);
                self.draft.set_value(DraftWrite::Written);
            }
            Some(DraftWrite::Written) | None => {}
        }
    }

    /// Writes the draft now, if it does not hold the newest change.
    #[cfg(feature = "hydrate")]
    fn write_draft(self) {
        let text = match self.draft.try_get_value() {
            Some(DraftWrite::Due) => self.draft_text(),
            Some(DraftWrite::Serialized(text)) => Some(text),
            Some(DraftWrite::Written) | None => return,
        };
        if let Some(text) = text {
            self.store_draft(&text);
        }
        self.draft.set_value(DraftWrite::Written);
    }

    /// A field still being typed in as the page goes (a reload, the tab
    /// closed): applied at once, so what was typed is in the draft. A
    /// field applies as it is left, and a page that unloads never leaves
    /// it.
    #[cfg(feature = "hydrate")]
    fn take_typing(self) {
        let Some(before) = self.editor.revision.try_get_untracked() else {
            return;
        };
        super::gestures::commit_focused_field();
        if self.editor.revision.try_get_untracked() != Some(before) {
            self.draft.set_value(DraftWrite::Due);
        }
    }

    /// Writes the draft at once when the page is hidden (another tab, the
    /// window minimised, the tab closed, a reload), or left for another of
    /// the app's pages: the last moment it is sure to run.
    #[cfg(feature = "hydrate")]
    fn flush_draft_when_hidden(self) {
        let hidden = window_event_listener(leptos::ev::pagehide, move |_| {
            self.take_typing();
            self.write_draft();
        });
        let switched = window_event_listener(leptos::ev::visibilitychange, move |_| {
            if document().visibility_state() == web_sys::VisibilityState::Hidden {
                self.write_draft();
            }
        });
        // Leaving for another page of the app (a link to another graph,
        // the breadcrumb) hides nothing and unloads nothing: the draft is
        // written as the editor goes, while its state is still there, and
        // the edit is saved when the graph is opened again.
        on_cleanup(move || {
            hidden.remove();
            switched.remove();
            if self.draft.try_get_value().is_some() {
                self.write_draft();
            }
        });
    }

    /// Saves now (the debounce calls this).
    #[cfg(feature = "hydrate")]
    async fn save(self) {
        use crate::error::AppError;
        // One save at a time: the one in flight, when it comes back, sends
        // what changed meanwhile.
        if matches!(self.status.get_untracked(), SaveState::Conflict { .. })
            || self.in_flight.try_get_value().unwrap_or(true)
        {
            return;
        }
        let revision = self.editor.revision.get_untracked();
        let document = self.editor.document();
        self.status.set(SaveState::Saving);
        let id = self.graph_id.get_value();
        let Ok(document) = serde_json::to_value(&document) else {
            self.status
                .set(SaveState::Failed("the graph could not be written".into()));
            return;
        };
        self.in_flight.set_value(true);
        let saved =
            crate::graphs::save_graph(id.clone(), self.version.get_untracked(), document).await;
        // The editor may be gone (the page left) while the save was out.
        if self.in_flight.try_set_value(false).is_some() {
            return;
        }
        match saved {
            Ok(saved) => {
                self.version.set(saved.version);
                self.saved_revision.set_value(revision);
                if self.editor.revision.get_untracked() == revision {
                    // Saved: a draft still due would only be removed again.
                    self.draft.set_value(DraftWrite::Written);
                    if let Some(storage) = Self::storage() {
                        let _ = storage.remove_item(&draft_key(&id));
                    }
                    self.status.set(SaveState::Saved);
                } else {
                    // More changes came while saving: they go next.
                    self.status.set(SaveState::Unsaved);
                    self.changed();
                }
            }
            Err(AppError::Conflict {
                current_version, ..
            }) => {
                self.status.set(SaveState::Conflict {
                    theirs: current_version,
                });
            }
            Err(AppError::Transport(_)) => {
                self.status
                    .set(SaveState::Failed("the server cannot be reached".into()));
            }
            Err(error) => self.status.set(SaveState::Failed(error.to_string())),
        }
    }

    /// Drops local changes for the newest saved version.
    pub fn reload_theirs(self) {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let id = self.graph_id.get_value();
            let opened = match crate::graphs::get_graph(id.clone()).await {
                Ok(opened) => opened,
                Err(error) => {
                    self.status.set(SaveState::Failed(error.to_string()));
                    return;
                }
            };
            let Ok(document) = GraphDocument::from_json(&opened.graph.document) else {
                self.status
                    .set(SaveState::Failed("the saved graph does not read".into()));
                return;
            };
            self.editor.replace(document);
            self.version.set(opened.graph.version);
            self.saved_revision
                .set_value(self.editor.revision.get_untracked());
            if let Some(storage) = Self::storage() {
                let _ = storage.remove_item(&draft_key(&id));
            }
            self.status.set(SaveState::Saved);
        });
    }

    /// Saves local changes as a new graph and opens it; the original stays
    /// as the teammate saved it.
    pub fn keep_mine_as_copy(self) {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let mut document = self.editor.document();
            document.name = format!("{} (my copy)", document.name);
            let Ok(document) = serde_json::to_value(&document) else {
                return;
            };
            let new_id = match crate::graphs::save_as_new_graph(document).await {
                Ok(saved) => saved.id,
                Err(error) => {
                    self.status.set(SaveState::Failed(error.to_string()));
                    return;
                }
            };
            if let Some(storage) = Self::storage() {
                let _ = storage.remove_item(&draft_key(&self.graph_id.get_value()));
            }
            self.status.set(SaveState::Saved);
            let _ = window().location().set_href(&format!("/graphs/{new_id}"));
        });
    }

    #[cfg(feature = "hydrate")]
    fn guard_unload(self) {
        let handle = window_event_listener(leptos::ev::beforeunload, move |event| {
            if self
                .status
                .try_get_untracked()
                .is_some_and(|status| status != SaveState::Saved)
            {
                event.prevent_default();
                event.set_return_value("You have unsaved changes.");
            }
        });
        on_cleanup(move || handle.remove());
    }
}

#[cfg(test)]
mod tests {
    use super::{SaveState, draft_key};

    #[test]
    fn states_read_as_people_say_them() {
        assert_eq!(
            SaveState::Conflict { theirs: 7 }.label(),
            "Conflict with version 7"
        );
        assert_eq!(draft_key("g-1"), "heddle.draft.g-1");
    }
}

/// Waits `ms` milliseconds without blocking the page.
#[cfg(feature = "hydrate")]
async fn pause_ms(ms: u64) {
    let (done, waited) = futures::channel::oneshot::channel::<()>();
    set_timeout(
        move || {
            let _ = done.send(());
        },
        std::time::Duration::from_millis(ms),
    );
    let _ = waited.await;
}
