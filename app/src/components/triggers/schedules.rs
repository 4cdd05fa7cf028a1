//! The graph's schedules: listed with their next times (in their time
//! zone) and what their last time did; editors add one, turn one off or
//! on, and delete one.

use leptos::prelude::*;
use serde_json::Value;

use super::confirmed;
use super::trigger_list::{TriggerList, listed, versions};
use crate::components::{FormError, action_error};
use crate::schedules::{
    CreateSchedule, DeleteSchedule, Missed, Schedule, ScheduleSettings, UpdateSchedule,
    list_schedules,
};

/// Time zones offered as you type (any IANA name is taken).
const ZONES: &[&str] = &[
    "UTC",
    "Europe/London",
    "Europe/Paris",
    "Europe/Berlin",
    "Europe/Madrid",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Asia/Tokyo",
    "Asia/Shanghai",
    "Asia/Kolkata",
    "Asia/Singapore",
    "Australia/Sydney",
];

#[component]
pub fn Schedules(graph_id: String, can_edit: bool, open: RwSignal<bool>) -> impl IntoView {
    let create = ServerAction::<CreateSchedule>::new();
    let update = ServerAction::<UpdateSchedule>::new();
    let delete = ServerAction::<DeleteSchedule>::new();
    let changed = versions(vec![
        create.version().into(),
        update.version().into(),
        delete.version().into(),
    ]);
    let schedules = listed(open, changed, graph_id.clone(), list_schedules);
    let rows_graph = graph_id.clone();
    let row = Callback::new(move |schedule: Schedule| {
        let graph_id = rows_graph.clone();
        view! { <ScheduleRow schedule graph_id can_edit update delete /> }.into_any()
    });
    let new_form = ViewFn::from(move || view! { <NewSchedule graph_id=graph_id.clone() create /> });
    view! {
        <TriggerList
            title="Schedules"
            plural="schedules"
            new_label="New schedule"
            items=schedules
            row
            can_edit
            new_form
            errors=vec![action_error(update.value(), update.version()), action_error(delete.value(), delete.version())]
        />
    }
}

#[component]
fn ScheduleRow(
    schedule: Schedule,
    graph_id: String,
    can_edit: bool,
    update: ServerAction<UpdateSchedule>,
    delete: ServerAction<DeleteSchedule>,
) -> impl IntoView {
    let status = if schedule.enabled { "Active" } else { "Off" };
    let missed = match schedule.missed {
        Missed::Skip => "missed times skipped",
        Missed::RunOnce => "missed times run once",
    };
    let next = match schedule.upcoming.first() {
        Some(first) => format!("next {first}"),
        None => "not firing".to_string(),
    };
    let later = schedule
        .upcoming
        .iter()
        .skip(1)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    let last = match (&schedule.last_run_id, &schedule.last_error) {
        (Some(run), _) => Some(
            view! {
                <a href=format!("?run={run}") rel="external">"last run"</a>
            }
            .into_any(),
        ),
        (None, Some(error)) => Some(
            view! { <span class="inline-error">{format!("last time: {error}")}</span> }.into_any(),
        ),
        (None, None) => None,
    };
    let toggled = ScheduleSettings {
        name: schedule.name.clone(),
        cron: schedule.cron.clone(),
        timezone: schedule.timezone.clone(),
        input: schedule.input.clone(),
        missed: schedule.missed,
        enabled: !schedule.enabled,
    };
    let actions = can_edit.then(|| {
        let (graph_a, graph_b) = (graph_id.clone(), graph_id);
        let (id_a, id_b) = (schedule.id.clone(), schedule.id.clone());
        let name = schedule.name.clone();
        let toggle_label = if schedule.enabled { "Turn off" } else { "Turn on" };
        view! {
            <div class="trigger-actions">
                <button class="button button-small" type="button" on:click=move |_| {
                    update.dispatch(UpdateSchedule { graph_id: graph_a.clone(), id: id_a.clone(), settings: toggled.clone() });
                }>{toggle_label}</button>
                <button class="button button-small" type="button" on:click=move |_| {
                    if confirmed(&format!("Delete the schedule “{name}”?")) {
                        delete.dispatch(DeleteSchedule { graph_id: graph_b.clone(), id: id_b.clone() });
                    }
                }>"Delete"</button>
            </div>
        }
    });
    view! {
        <li class="key-row trigger-row" class:key-inactive=!schedule.enabled data-schedule=schedule.id.clone()>
            <div class="key-main">
                <span class="key-name">{schedule.name.clone()}</span>
                <span class="mono key-prefix">{schedule.cron.clone()}</span>
                <span class=format!("key-status key-{}", status.to_lowercase())>{status}</span>
            </div>
            <div class="graph-row-meta" title=later data-testid="next-time">{next} " · " {schedule.timezone.clone()}</div>
            <div class="graph-row-meta">{missed} {last.map(|last| view! { " · " {last} })}</div>
            {actions}
        </li>
    }
}

#[component]
fn NewSchedule(graph_id: String, create: ServerAction<CreateSchedule>) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let cron = RwSignal::new(String::new());
    let zone = RwSignal::new(String::from("UTC"));
    let input = RwSignal::new(String::from("{}"));
    let missed = RwSignal::new(Missed::Skip);
    let problem = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        if matches!(create.value().get(), Some(Ok(_))) {
            name.set(String::new());
            cron.set(String::new());
        }
    });
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        let parsed: Value = match serde_json::from_str(&input.get_untracked()) {
            Ok(value) => value,
            Err(error) => {
                problem.set(Some(format!("Input: not JSON ({error})")));
                return;
            }
        };
        problem.set(None);
        create.dispatch(CreateSchedule {
            graph_id: graph_id.clone(),
            settings: ScheduleSettings {
                name: name.get_untracked(),
                cron: cron.get_untracked(),
                timezone: zone.get_untracked(),
                input: parsed,
                missed: missed.get_untracked(),
                enabled: true,
            },
        });
    };
    view! {
        <form class="key-form trigger-form" on:submit=submit>
            <label class="field">
                <span class="field-label">"Name"</span>
                <input name="schedule-name" required maxlength="64" placeholder="Morning digest"
                    prop:value=move || name.get() on:input=move |event| name.set(event_target_value(&event)) />
            </label>
            <div class="key-form-row">
                <label class="field">
                    <span class="field-label">"When (cron)"</span>
                    <input name="schedule-cron" class="mono" required placeholder="0 9 * * MON-FRI"
                        prop:value=move || cron.get() on:input=move |event| cron.set(event_target_value(&event)) />
                    <span class="field-hint">"minute hour day month weekday"</span>
                </label>
                <label class="field">
                    <span class="field-label">"Time zone"</span>
                    <input name="schedule-zone" list="schedule-zones" required
                        prop:value=move || zone.get() on:input=move |event| zone.set(event_target_value(&event)) />
                    <datalist id="schedule-zones">
                        {ZONES.iter().map(|zone| view! { <option value=*zone></option> }).collect_view()}
                    </datalist>
                </label>
            </div>
            <label class="field">
                <span class="field-label">"Input"</span>
                <textarea name="schedule-input" rows="2" class="mono"
                    prop:value=move || input.get() on:input=move |event| input.set(event_target_value(&event))></textarea>
            </label>
            <label class="field">
                <span class="field-label">"Times missed while no server ran"</span>
                <select name="schedule-missed" on:change=move |event| {
                    missed.set(if event_target_value(&event) == "run_once" { Missed::RunOnce } else { Missed::Skip });
                }>
                    <option value="skip">"Skip them"</option>
                    <option value="run_once">"Run once"</option>
                </select>
            </label>
            <button class="button" type="submit" disabled=move || create.pending().get()>"Add schedule"</button>
            {move || problem.get().map(|why| view! { <p class="inline-error" role="alert">{why}</p> })}
            <FormError error=action_error(create.value(), create.version()) />
        </form>
    }
}
