//! The version history: every save, with its time, author and what it
//! changed; a version can be named; preview one (drawn read-only), and
//! restore it (saved as the newest version, so nothing in between is
//! lost). Autosave makes a version per pause in typing, so one person's
//! saves a few minutes apart are shown as one entry, the earlier ones
//! folded under it.

use leptos::prelude::*;

use super::persist::Persistence;
use super::state::Editor;
use crate::components::{CodeSpans, GraphPreview, LocalTime};
use crate::graphs::{VersionSummary, get_version, label_version, list_versions, restore_version};
use crate::publishing::Live;

#[component]
pub fn VersionHistory(
    editor: Editor,
    persistence: Persistence,
    graph_id: String,
    can_edit: bool,
    /// Which version is live, with Publish on the others (a rollback when
    /// older) and "Take offline" on it.
    #[prop(default = None)]
    live: Option<Live>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let refresh = RwSignal::new(0u32);
    let list_id = graph_id.clone();
    let versions = Resource::new(
        move || (open.get(), persistence.version.get(), refresh.get()),
        move |(open, _, _)| {
            let graph_id = list_id.clone();
            async move {
                if open {
                    // Each version's scores: its newest finished experiment's.
                    let scored = crate::experiments::list_experiments(graph_id.clone())
                        .await
                        .map(|list| scores_by_version(&list))
                        .unwrap_or_default();
                    list_versions(graph_id).await.map(|list| (list, scored))
                } else {
                    Ok((Vec::new(), Default::default()))
                }
            }
        },
    );
    let preview = RwSignal::new(None::<(i64, String)>);
    let error = RwSignal::new(None::<String>);
    let show = {
        let graph_id = graph_id.clone();
        move |version: i64| {
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                match get_version(graph_id, version).await {
                    Ok(document) => preview.set(Some((version, document))),
                    Err(failure) => error.set(Some(failure.to_string())),
                }
            });
        }
    };
    let restore = {
        let graph_id = graph_id.clone();
        move |version: i64| {
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                match restore_version(graph_id, version).await {
                    Ok(_) => {
                        preview.set(None);
                        persistence.reload_theirs();
                    }
                    Err(failure) => error.set(Some(failure.to_string())),
                }
            });
        }
    };
    let restore_from_preview = restore.clone();
    // The version being named, and its name as typed.
    let naming = RwSignal::new(None::<i64>);
    let name_it = {
        let graph_id = graph_id.clone();
        move |version: i64, label: String| {
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                match label_version(graph_id, version, label).await {
                    Ok(()) => {
                        naming.set(None);
                        refresh.update(|n| *n += 1);
                    }
                    Err(failure) => error.set(Some(failure.to_string())),
                }
            });
        }
    };
    view! {
        <details class="history" on:toggle=move |event| {
            open.set(event_target::<web_sys::HtmlDetailsElement>(&event).open());
        }>
            <summary>"Version history"</summary>
            {move || error.get().map(|message| view! { <p class="field-error" role="alert">{message}</p> })}
            <Transition fallback=|| view! { <p class="loading">"Loading versions…"</p> }>
                {move || {
                    let show = show.clone();
                    let restore = restore.clone();
                    let name_it = name_it.clone();
                    Suspend::new(async move {
                        let (list, scored): (Vec<VersionSummary>, Scored) =
                            versions.await.unwrap_or_default();
                        let scored = std::sync::Arc::new(scored);
                        let current = persistence.version.get_untracked();
                        let live_now = live.and_then(|live| live.version_untracked());
                        let row = {
                            let show = show.clone();
                            let restore = restore.clone();
                            let name_it = name_it.clone();
                            move |mut version: VersionSummary| {
                                let scores = scored.get(&version.version).cloned();
                                // Nodes named as the canvas names them.
                                version.summary = editor.named(&version.summary);
                                version_row(
                                    version,
                                    RowActions {
                                        show: show.clone(),
                                        restore: restore.clone(),
                                        name_it: name_it.clone(),
                                    },
                                    RowState {
                                        current,
                                        can_edit,
                                        live,
                                        naming,
                                        scores,
                                    },
                                )
                            }
                        };
                        view! {
                            <ul class="version-list">
                                {group(list, live_now)
                                    .into_iter()
                                    .map(|mut entries| {
                                        let newest = entries.remove(0);
                                        let folded = (!entries.is_empty()).then(|| {
                                            let count = entries.len();
                                            let label = if count == 1 {
                                                "1 earlier save".to_string()
                                            } else {
                                                format!("{count} earlier saves")
                                            };
                                            view! {
                                                <li class="version-fold">
                                                    <details>
                                                        <summary>{label}</summary>
                                                        <ul class="version-list">
                                                            {entries.into_iter().map(row.clone()).collect_view()}
                                                        </ul>
                                                    </details>
                                                </li>
                                            }
                                        });
                                        view! {
                                            {row(newest)}
                                            {folded}
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                    })
                }}
            </Transition>
        </details>
        {move || {
            let restore = restore_from_preview.clone();
            preview.get().map(|(number, document)| view! {
                <div class="help-overlay" role="dialog" aria-label="Version preview" on:click=move |_| preview.set(None)>
                    <div class="help-card preview-card" on:click=|event| event.stop_propagation()>
                        <h2>{format!("Version {number}")}</h2>
                        <div class="preview-frame"><GraphPreview document /></div>
                        <div class="conflict-actions">
                            <button class="button" type="button" on:click=move |_| preview.set(None)>"Close"</button>
                            {can_edit.then(|| view! {
                                <button class="button button-primary" type="button" on:click=move |_| restore(number)>"Restore this version"</button>
                            })}
                        </div>
                    </div>
                </div>
            })
        }}
    }
}

/// What a version's buttons do.
#[derive(Clone)]
struct RowActions<S, R, N> {
    show: S,
    restore: R,
    name_it: N,
}

/// What a version's row needs to know.
#[derive(Clone)]
struct RowState {
    current: i64,
    can_edit: bool,
    live: Option<Live>,
    naming: RwSignal<Option<i64>>,
    /// Its newest finished experiment's scores, in words.
    scores: Option<String>,
}

/// Per graph version, its newest finished experiment's scores in words
/// (`answer 0.67 · tone 1.00 on Support v3`).
type Scored = std::collections::BTreeMap<i64, String>;

fn scores_by_version(experiments: &[crate::experiments::Experiment]) -> Scored {
    let mut scored = Scored::new();
    // Newest first: the first seen of a version is its newest.
    for experiment in experiments {
        if experiment.status != crate::experiments::ExperimentStatus::Finished
            || scored.contains_key(&experiment.graph_version)
        {
            continue;
        }
        let scores: Vec<String> = experiment
            .scores
            .iter()
            .map(|summary| format!("{} {:.2}", summary.scorer, summary.mean))
            .collect();
        let dataset = experiment.dataset_name.clone().unwrap_or_default();
        scored.insert(
            experiment.graph_version,
            format!(
                "{} on {dataset} v{}",
                scores.join(" · "),
                experiment.dataset_version
            ),
        );
    }
    scored
}

/// One version: number, name, when and who, what it changed, and its
/// buttons (preview, restore, name, publish).
fn version_row<S, R, N>(
    version: VersionSummary,
    actions: RowActions<S, R, N>,
    state: RowState,
) -> AnyView
where
    S: Fn(i64) + Clone + Send + Sync + 'static,
    R: Fn(i64) + Clone + Send + Sync + 'static,
    N: Fn(i64, String) + Clone + Send + Sync + 'static,
{
    let RowActions {
        show,
        restore,
        name_it,
    } = actions;
    let RowState {
        current,
        can_edit,
        live,
        naming,
        scores,
    } = state;
    let number = version.version;
    let label = version.label.clone();
    let typed = RwSignal::new(label.clone().unwrap_or_default());
    let summary = (!version.summary.is_empty()).then(|| version.summary.clone());
    let editing = move || naming.get() == Some(number);
    let commit = {
        let name_it = name_it.clone();
        move || name_it(number, typed.get_untracked())
    };
    view! {
        <li class="version-row" data-version=number>
            <span class="version-number">{format!("v{number}")}</span>
            {label.clone().map(|label| view! { <span class="version-label">{label}</span> })}
            {live.map(|live| move || (live.version() == Some(number)).then(|| view! {
                <span class="badge badge-live" data-testid="live-marker"
                    title="Calls from outside the editor run this version">"Live"</span>
            }))}
            <span class="version-meta">
                <LocalTime at=version.created_at.clone() />
                {version.author.map(|author| format!(" · {author}"))}
            </span>
            {summary.map(|text| view! { <span class="version-summary"><CodeSpans text /></span> })}
            {scores.map(|text| view! {
                <span class="version-scores" data-testid="version-scores"
                    title="Its newest finished experiment's mean scores">{text}</span>
            })}
            {move || editing().then(|| {
                let commit = commit.clone();
                let commit_key = commit.clone();
                view! {
                    <form class="version-name-form" on:submit=move |event| { event.prevent_default(); commit(); }>
                        <input aria-label="Version name" maxlength="80" placeholder="e.g. before the billing rework"
                            prop:value=move || typed.get() on:input=move |event| typed.set(event_target_value(&event))
                            on:keydown=move |event: leptos::ev::KeyboardEvent| {
                                if event.key() == "Escape" { naming.set(None); }
                                if event.key() == "Enter" { event.prevent_default(); commit_key(); }
                            } />
                        <button class="button button-small button-primary" type="submit">"Save name"</button>
                    </form>
                }
            })}
            <span class="version-actions">
                <button class="button button-small" type="button" on:click=move |_| show(number)>"Preview"</button>
                {(can_edit && number != current).then(|| view! {
                    <button class="button button-small" type="button" on:click=move |_| restore(number)>"Restore"</button>
                })}
                {can_edit.then(|| view! {
                    <button class="button button-small" type="button"
                        on:click=move |_| naming.set(if naming.get_untracked() == Some(number) { None } else { Some(number) })>
                        {if label.is_some() { "Rename" } else { "Name" }}
                    </button>
                })}
                {live.filter(|_| can_edit).map(|live| move || match live.version() == Some(number) {
                    true => view! {
                        <button class="button button-small" type="button" disabled=move || live.pending.get()
                            title="Refuse calls from outside until a version is published again"
                            on:click=move |_| live.unpublish()>"Take offline"</button>
                    }.into_any(),
                    false => view! {
                        <button class="button button-small" type="button" disabled=move || live.pending.get()
                            title=format!("Make version {number} the one calls from outside run")
                            on:click=move |_| live.publish(number)>"Publish"</button>
                    }.into_any(),
                })}
            </span>
        </li>
    }
    .into_any()
}

/// How close one person's saves must be to be shown as one entry.
const FOLD_MINUTES: i64 = 10;

/// The versions (newest first) in entries: a named version, the live one,
/// or a save by someone else or long after stands alone; one person's
/// saves within [`FOLD_MINUTES`] of each other go together, newest first.
fn group(versions: Vec<VersionSummary>, live: Option<i64>) -> Vec<Vec<VersionSummary>> {
    let alone = |version: &VersionSummary| version.label.is_some() || Some(version.version) == live;
    let mut groups: Vec<Vec<VersionSummary>> = Vec::new();
    for version in versions {
        let joins = groups
            .last()
            .and_then(|group| group.last())
            .is_some_and(|newer| {
                !alone(newer)
                    && !alone(&version)
                    && newer.author == version.author
                    && minutes(&newer.created_at)
                        .zip(minutes(&version.created_at))
                        .is_some_and(|(a, b)| (a - b).abs() <= FOLD_MINUTES)
            });
        match groups.last_mut() {
            Some(group) if joins => group.push(version),
            _ => groups.push(vec![version]),
        }
    }
    groups
}

/// Minutes since 1970 of an RFC 3339 UTC time (`2026-11-23T07:07:47.123Z`).
fn minutes(iso: &str) -> Option<i64> {
    let number = |range: std::ops::Range<usize>| iso.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute) = (number(11..13)?, number(14..16)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 24 + hour) * 60 + minute)
}

#[cfg(test)]
mod tests {
    use super::{group, minutes};
    use crate::graphs::VersionSummary;

    fn version(number: i64, at: &str, author: &str, label: Option<&str>) -> VersionSummary {
        VersionSummary {
            version: number,
            name: "g".into(),
            node_count: 1,
            created_at: at.into(),
            author: Some(author.into()),
            summary: String::new(),
            label: label.map(str::to_string),
        }
    }

    #[test]
    fn times_read_as_minutes() {
        assert_eq!(minutes("1970-01-01T00:01:00Z"), Some(1));
        assert_eq!(
            minutes("2026-11-23T07:07:47.123Z").zip(minutes("2026-11-22T23:59:00Z")),
            Some((29_923_627, 29_923_199))
        );
        assert_eq!(minutes("soon"), None);
    }

    #[test]
    fn one_persons_saves_close_together_fold_into_one_entry() {
        let list = vec![
            version(7, "2026-11-23T10:30:00Z", "olivia", None),
            version(6, "2026-11-23T10:25:00Z", "olivia", None),
            version(5, "2026-11-23T10:21:00Z", "olivia", None),
            version(4, "2026-11-23T10:20:00Z", "sam", None),
            version(3, "2026-11-23T10:19:00Z", "sam", Some("reviewed")),
            version(2, "2026-11-23T10:18:00Z", "sam", None),
            version(1, "2026-11-23T08:00:00Z", "sam", None),
        ];
        let numbers: Vec<Vec<i64>> = group(list.clone(), None)
            .iter()
            .map(|g| g.iter().map(|v| v.version).collect())
            .collect();
        assert_eq!(numbers, [vec![7, 6, 5], vec![4], vec![3], vec![2], vec![1]]);
        // The live version stands alone.
        let numbers: Vec<Vec<i64>> = group(list, Some(6))
            .iter()
            .map(|g| g.iter().map(|v| v.version).collect())
            .collect();
        assert_eq!(numbers[..3], [vec![7], vec![6], vec![5]]);
    }
}
