//! Validation reports every problem at once, each located.

use heddle_engine::validate::{ProblemKind, Report, Severity};
use serde_json::{Value, json};

use crate::support::{channels, document, registry};

fn report(value: Value) -> Report {
    heddle_engine::validate(&document(value), &registry())
}

fn find<'a>(report: &'a Report, path: &str) -> &'a heddle_engine::validate::Problem {
    report
        .problems
        .iter()
        .find(|problem| problem.path == path)
        .unwrap_or_else(|| panic!("no problem at {path}; got:\n{report}"))
}

#[test]
fn a_valid_graph_has_no_problems() {
    let report = report(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end"}]
    }));
    assert!(report.problems.is_empty(), "{report}");
}

#[test]
fn every_problem_is_reported_at_once_with_its_path() {
    let report = report(json!({
        "state": {"channels": {
            "name": {"type": "string", "reducer": "sum"},
            "items": {"type": "list", "reducer": "append", "default": "nope"}
        }},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "start", "kind": "set"},
            {"id": "mystery", "kind": "teleport"},
            {"id": "branch", "kind": "condition", "config": {"routes": [{"route": "yes", "when": "x >"}]}},
            {"id": "writer", "kind": "set", "config": {"values": {"nowhere": {"value": 1}}}},
            {"id": "future", "kind": "set", "version": 9},
            {"id": "picky", "kind": "condition", "config": {"routes": [{"route": "a", "when": "true"}], "otherwise": "b"}},
            {"id": "badcfg", "kind": "set", "config": {"valuez": {}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "ghost"},
            {"id": "e1", "from": "start", "to": "writer", "condition": "count >= "},
            {"id": "e3", "from": "picky", "to": "writer", "route": "a"},
            {"id": "e4", "from": "picky", "to": "writer", "route": "nope"},
            {"id": "e5", "from": "start", "to": "writer", "route": "x"}
        ],
        "entry": "start"
    }));
    let expect = [
        ("state.channels.name.reducer", "ReducerMismatch"),
        ("state.channels.items.default", "BadDefault"),
        ("nodes[1].id", "DuplicateId"),
        ("nodes[2].kind", "UnknownKind"),
        ("nodes[3].config.routes[0].when", "BadConfig"),
        ("nodes[4].config.values.nowhere", "BadConfig"),
        ("nodes[5].version", "NewerKindVersion"),
        ("nodes[6].config", "RouteWithoutEdge"),
        ("nodes[7].config.valuez", "BadConfig"),
        ("edges[0].to", "MissingNode"),
        ("edges[1].id", "DuplicateId"),
        ("edges[1].condition", "BadCondition"),
        ("edges[3].route", "UnknownRoute"),
        ("edges[4].route", "UnknownRoute"),
    ];
    for (path, kind) in expect {
        let problem = find(&report, path);
        assert!(
            format!("{:?}", problem.kind).starts_with(kind),
            "{path}: {problem}"
        );
        assert_eq!(problem.severity, Severity::Error, "{path}");
    }
    // Problems name their node or edge.
    assert_eq!(
        find(&report, "nodes[2].kind")
            .node
            .as_ref()
            .unwrap()
            .as_str(),
        "mystery"
    );
    assert_eq!(
        find(&report, "edges[0].to").edge.as_ref().unwrap().as_str(),
        "e1"
    );
    assert!(
        find(&report, "nodes[4].config.values.nowhere")
            .message
            .contains("`nowhere` is not a channel")
    );
    assert!(
        find(&report, "nodes[7].config.valuez")
            .message
            .contains("unknown field `valuez`")
    );
    // The entry is the first `start`; its duplicate is not taken for it.
    assert!(
        report
            .problems
            .iter()
            .all(|p| p.path != "nodes[0]" || p.severity == Severity::Warning)
    );
    assert!(
        !report
            .problems
            .iter()
            .any(|p| p.path == "nodes[0]" && matches!(p.kind, ProblemKind::Unreachable { .. }))
    );
    assert!(
        find(&report, "nodes[6].config")
            .message
            .contains("node `picky` may choose route `b`, but no edge takes it")
    );
    assert!(
        find(&report, "edges[3].route")
            .message
            .contains("its routes: a, b")
    );
    assert!(
        find(&report, "edges[4].route")
            .message
            .contains("it chooses no routes")
    );
}

#[test]
fn an_entry_is_required_unless_there_is_one_start() {
    let no_start = report(json!({"nodes": [{"id": "a", "kind": "set"}]}));
    assert!(matches!(
        find(&no_start, "entry").kind,
        ProblemKind::NoEntry
    ));
    let missing = report(json!({"nodes": [{"id": "a", "kind": "set"}], "entry": "b"}));
    assert!(matches!(
        find(&missing, "entry").kind,
        ProblemKind::MissingEntry { .. }
    ));
    let implied = report(json!({"nodes": [{"id": "s", "kind": "start"}]}));
    assert!(!implied.has_errors(), "{implied}");
}

#[test]
fn unreachable_and_endless_nodes_are_warnings() {
    let report = report(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "a", "kind": "set"},
            {"id": "b", "kind": "set"},
            {"id": "island", "kind": "set"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "a"},
            {"id": "e2", "from": "a", "to": "b"},
            {"id": "e3", "from": "b", "to": "a"}
        ]
    }));
    assert!(!report.has_errors(), "{report}");
    let island = find(&report, "nodes[3]");
    assert!(matches!(island.kind, ProblemKind::Unreachable { .. }));
    assert_eq!(island.severity, Severity::Warning);
    for path in ["nodes[0]", "nodes[1]", "nodes[2]"] {
        assert!(
            matches!(find(&report, path).kind, ProblemKind::CannotReachEnd { .. }),
            "{path}"
        );
    }
}

#[test]
fn groups_are_for_people_what_is_wrong_with_one_is_a_warning() {
    let value = json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end"}],
        "groups": [
            {"id": "g1", "label": "Ends", "nodes": ["start", "end"], "collapsed": true},
            {"id": "g1", "label": "Again", "nodes": ["gone", "end"]}
        ]
    });
    let report = report(value.clone());
    assert!(!report.has_errors(), "{report}");
    assert!(matches!(
        &find(&report, "groups[1].id").kind,
        ProblemKind::DuplicateId { id } if id == "g1"
    ));
    let missing = find(&report, "groups[1].nodes[0]");
    assert!(matches!(
        &missing.kind,
        ProblemKind::MissingGroupMember { node, .. } if node.as_str() == "gone"
    ));
    let twice = find(&report, "groups[1].nodes[1]");
    assert!(matches!(
        &twice.kind,
        ProblemKind::GroupedTwice { first, .. } if first == "g1"
    ));
    assert_eq!(twice.node.as_ref().map(|n| n.as_str()), Some("end"));
    assert_eq!(report.problems.len(), 3, "{report}");
    // One fix mends them all: the missing node and the twice-framed one
    // leave the second group, and the duplicate id is made fresh.
    let mut mended = document(value.clone());
    twice.fix.as_ref().expect("a fix").apply(&mut mended);
    assert!(
        heddle_engine::validate(&mended, &registry())
            .problems
            .is_empty()
    );
    assert_eq!(mended.groups.len(), 1, "the second group, emptied, went");
    // Two groups with one id: the second gets a fresh one.
    let mut twins = document(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end"}],
        "groups": [{"id": "g", "nodes": ["start"]}, {"id": "g", "nodes": ["end"]}]
    }));
    twins.mend_groups();
    let ids: Vec<&str> = twins.groups.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["g", "group-1"]);
    // Runs ignore groups: the graph runs as it would without them.
    let document = document(value);
    assert!(document.groups[0].collapsed);
    assert!(heddle_engine::compile(&document, &registry()).is_ok());
}

#[test]
fn conditions_reading_unknown_channels_are_warned_about() {
    let report = report(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end", "condition": "cuont > 1"}]
    }));
    let problem = find(&report, "edges[0].condition");
    assert_eq!(problem.severity, Severity::Warning);
    assert!(problem.message.contains("`cuont`"));
}

#[test]
fn bad_retry_and_timeout_settings_are_errors() {
    let report = report(json!({
        "nodes": [{"id": "s", "kind": "start", "timeout_ms": 0,
                   "retry": {"max_attempts": 0, "backoff_factor": 0.5, "initial_interval_ms": 10, "max_interval_ms": 5}}]
    }));
    for path in [
        "nodes[0].timeout_ms",
        "nodes[0].retry.max_attempts",
        "nodes[0].retry.backoff_factor",
        "nodes[0].retry.max_interval_ms",
    ] {
        assert!(
            matches!(find(&report, path).kind, ProblemKind::BadSetting { .. }),
            "{path}"
        );
    }
}

#[test]
fn problems_serialize_with_a_code_for_the_editor() {
    let report = report(json!({"nodes": [{"id": "x", "kind": "nope"}], "entry": "x"}));
    let value = serde_json::to_value(&report).unwrap();
    assert_eq!(value["problems"][0]["kind"]["code"], "unknown_kind");
    assert_eq!(value["problems"][0]["path"], "nodes[0].kind");
    assert_eq!(value["problems"][0]["node"], "x");
}

/// Applies every fix the report offers, once, in order.
fn apply_fixes(document: &mut heddle_engine::GraphDocument, report: &Report) -> usize {
    let fixes: Vec<_> = report
        .problems
        .iter()
        .filter_map(|p| p.fix.clone())
        .collect();
    for fix in &fixes {
        fix.apply(document);
    }
    fixes.len()
}

#[test]
fn a_lone_agent_is_made_runnable_by_its_fixes_alone() {
    // What a new user makes first: one agent node, nothing else.
    let mut graph = document(json!({
        "nodes": [{"id": "agent", "kind": "agent", "position": {"x": 300.0, "y": 40.0}}]
    }));
    let before = heddle_engine::validate(&graph, &registry());
    let labels: Vec<String> = before
        .problems
        .iter()
        .filter_map(|p| p.fix.as_ref().map(|fix| fix.label()))
        .collect();
    assert_eq!(
        labels,
        ["Create channel `messages` (messages)", "Add a start node"],
        "{before}"
    );
    assert_eq!(apply_fixes(&mut graph, &before), 2);
    let after = heddle_engine::validate(&graph, &registry());
    assert!(after.problems.is_empty(), "{after}");
    // The channel is a conversation, the start asks for it and leads in.
    let messages = &graph.state.channels["messages"];
    assert_eq!(
        messages.reducer,
        heddle_engine::format::Reducer::AddMessages
    );
    assert_eq!(messages.scope, heddle_engine::format::ChannelScope::Thread);
    let start = &graph.nodes[0];
    assert_eq!(start.kind, "start");
    assert_eq!(start.config, json!({"inputs": ["messages"]}));
    assert_eq!(start.position.map(|p| (p.x, p.y)), Some((60.0, 40.0)));
    assert_eq!(graph.edges[0].from.as_str(), "start");
    assert_eq!(graph.edges[0].to.as_str(), "agent");
    // A fix that no longer applies changes nothing.
    let again = graph.clone();
    apply_fixes(&mut graph, &before);
    assert_eq!(graph, again);
}

#[test]
fn a_node_that_only_loops_gets_an_end_and_a_missing_answer_channel_a_string() {
    let mut graph = document(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "ask", "kind": "ask", "config": {"prompt": "Name?", "answer": "name"}},
            {"id": "again", "kind": "set", "config": {"values": {"count": {"expr": "count + 1"}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "ask"},
            {"id": "e2", "from": "ask", "to": "again"},
            {"id": "e3", "from": "again", "to": "ask"}
        ]
    }));
    let before = heddle_engine::validate(&graph, &registry());
    let fixes: Vec<_> = before
        .problems
        .iter()
        .filter_map(|p| p.fix.clone())
        .collect();
    assert!(
        fixes.contains(&heddle_engine::validate::Fix::AddChannel {
            channel: "name".into(),
            ty: heddle_engine::format::ChannelType::String
        }),
        "{fixes:?}"
    );
    // Offered where the loop closes, not at every node on the way.
    let ends: Vec<_> = fixes
        .iter()
        .filter(|fix| matches!(fix, heddle_engine::validate::Fix::AddEnd { .. }))
        .collect();
    assert_eq!(
        ends,
        [&heddle_engine::validate::Fix::AddEnd {
            after: "again".into()
        }]
    );
    // One end is enough: after the first, no node loops for ever.
    let first_end = fixes
        .iter()
        .find(|fix| matches!(fix, heddle_engine::validate::Fix::AddEnd { .. }));
    for fix in fixes
        .iter()
        .filter(|fix| !matches!(fix, heddle_engine::validate::Fix::AddEnd { .. }))
        .chain(first_end)
    {
        fix.apply(&mut graph);
    }
    let after = heddle_engine::validate(&graph, &registry());
    assert!(after.problems.is_empty(), "{after}");
    assert_eq!(graph.nodes.iter().filter(|n| n.kind == "end").count(), 1);
}

#[test]
fn a_nodes_routes_are_what_its_edges_may_carry() {
    let mut channels = channels();
    channels["messages"] = json!({"type": "messages", "reducer": "add_messages"});
    let document = document(json!({
        "state": {"channels": channels},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "triage", "kind": "router", "config": {
                "routes": [{"route": "billing", "description": "money"}, {"route": "tech", "description": "bugs"}],
                "otherwise": "human",
            }},
            {"id": "check", "kind": "condition", "config": {"routes": [{"route": "big", "when": "count > 3"}]}},
            {"id": "end", "kind": "end"}
        ],
        "edges": []
    }));
    let routes = |node: &str| heddle_engine::node_routes(&document, &node.into(), &registry());
    let mut triage = routes("triage").expect("a router builds");
    triage.sort();
    assert_eq!(triage, ["billing", "human", "tech"]);
    assert_eq!(routes("check"), Some(vec!["big".to_string()]));
    assert_eq!(routes("start"), Some(vec![]));
    assert_eq!(routes("nowhere"), None);
}

#[test]
fn a_saved_subgraph_is_checked_where_it_is_embedded_and_refused_where_nothing_reads_it() {
    let graph = |output: &str| {
        document(json!({
            "state": {"channels": {"heard": {"type": "string"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "inner", "kind": "subgraph",
                       "config": {"graph_id": "g-123", "outputs": {output: "word"}}}],
            "edges": [{"id": "e", "from": "start", "to": "inner"}]
        }))
    };
    // Where nothing can read a saved graph (the command line): a problem
    // at the field.
    let here = heddle_engine::validate(&graph("heard"), &registry());
    let problem = find(&here, "nodes[1].config.graph_id");
    assert!(
        problem.message.contains("resolved by the Heddle server"),
        "{here}"
    );
    // In the app, the server embeds it when a run starts: no problem, but
    // this graph's own channels are still checked.
    let app = heddle_engine::Registry::for_validation(&Default::default());
    let report = heddle_engine::validate(&graph("heard"), &app);
    assert!(report.problems.is_empty(), "{report}");
    let report = heddle_engine::validate(&graph("missing"), &app);
    find(&report, "nodes[1].config.outputs.missing");
}

#[test]
fn a_sub_agent_naming_a_saved_graph_is_accepted_in_the_app_and_refused_where_nothing_reads_it() {
    let graph = document(json!({
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
                  {"id": "lead", "kind": "agent",
                   "config": {"sub_agents": [{"name": "helper", "description": "Helps.", "graph_id": "g-1"}],
                              "return_direct": ["helper"]}}],
        "edges": [{"id": "e", "from": "start", "to": "lead"}]
    }));
    let here = heddle_engine::validate(&graph, &registry());
    let problem = find(&here, "nodes[1].config.sub_agents[0].graph_id");
    assert!(
        problem.message.contains("resolved by the Heddle server"),
        "{here}"
    );
    // In the app it is one of the agent's tools (`return_direct` names it).
    let app = heddle_engine::Registry::for_validation(&Default::default());
    let report = heddle_engine::validate(&graph, &app);
    assert!(report.problems.is_empty(), "{report}");
}

#[test]
fn routes_typed_after_the_edges_were_drawn_are_given_to_them_in_a_click_each() {
    use heddle_engine::validate::Fix;
    let mut channels = channels();
    channels["messages"] = json!({"type": "messages", "reducer": "add_messages"});
    let mut graph = document(json!({
        "state": {"channels": channels},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "triage", "kind": "router", "config": {
                "routes": [
                    {"route": "billing", "description": "money"},
                    {"route": "technical", "description": "bugs"},
                    {"route": "general", "description": "the rest"},
                    {"route": "legal", "description": "lawyers"}
                ]
            }},
            {"id": "tech", "kind": "set", "label": "Technical support", "config": {"values": {"count": {"expr": "1"}}}},
            {"id": "bill", "kind": "set", "label": "Billing", "config": {"values": {"count": {"expr": "2"}}}},
            {"id": "general", "kind": "set", "config": {"values": {"count": {"expr": "3"}}}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "triage"},
            {"id": "e2", "from": "triage", "to": "tech"},
            {"id": "e3", "from": "triage", "to": "bill"},
            {"id": "e4", "from": "triage", "to": "general"},
            {"id": "e5", "from": "tech", "to": "end"},
            {"id": "e6", "from": "bill", "to": "end"},
            {"id": "e7", "from": "general", "to": "end"}
        ]
    }));
    let before = heddle_engine::validate(&graph, &registry());
    let route = |name: &str| {
        before
            .problems
            .iter()
            .find(
                |p| matches!(&p.kind, ProblemKind::RouteWithoutEdge { route, .. } if route == name),
            )
            .unwrap_or_else(|| panic!("no problem for route {name}:\n{before}"))
            .fix
            .clone()
    };
    // Each edge goes to the route its target is named after, whatever the
    // order they were drawn in; a route with no edge left gets no fix.
    let given = |edge: &str, route: &str, to: &str| {
        Some(Fix::RouteEdge {
            edge: edge.into(),
            route: route.into(),
            to: to.into(),
            was: None,
        })
    };
    assert_eq!(route("billing"), given("e3", "billing", "Billing"));
    assert_eq!(
        route("technical"),
        given("e2", "technical", "Technical support")
    );
    assert_eq!(route("general"), given("e4", "general", "general"));
    assert_eq!(route("legal"), None);
    assert_eq!(
        route("billing").map(|fix| fix.label()).as_deref(),
        Some("Send `billing` to Billing")
    );
    apply_fixes(&mut graph, &before);
    let routed: Vec<_> = graph.edges.iter().map(|e| e.route.as_deref()).collect();
    assert_eq!(
        routed,
        [
            None,
            Some("technical"),
            Some("billing"),
            Some("general"),
            None,
            None,
            None
        ]
    );
    let after = heddle_engine::validate(&graph, &registry());
    let left: Vec<_> = after.problems.iter().map(|p| p.kind.to_string()).collect();
    assert_eq!(
        left,
        ["node `triage` may choose route `legal`, but no edge takes it"]
    );
    // The router's fallback was offered too: its catch-all route.
    assert_eq!(graph.nodes[1].config["otherwise"], json!("general"));
    // A fix made stale (the edge was routed meanwhile) changes nothing.
    let mut again = graph.clone();
    given("e2", "billing", "x")
        .expect("a fix")
        .apply(&mut again);
    assert_eq!(again, graph);
}

#[test]
fn a_route_is_never_offered_the_edge_to_a_node_named_for_another() {
    // The edge to the technical answerer carries `billing` by a slip; the
    // edge left, to "Billing agent", is not offered `technical`.
    let mut channels = channels();
    channels["messages"] = json!({"type": "messages", "reducer": "add_messages"});
    let graph = document(json!({
        "state": {"channels": channels},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "triage", "kind": "router", "config": {
                "routes": [
                    {"route": "billing", "description": "money"},
                    {"route": "technical", "description": "bugs"}
                ],
                "otherwise": "technical"
            }},
            {"id": "tech", "kind": "set", "label": "Tech agent", "config": {"values": {"count": {"expr": "1"}}}},
            {"id": "bill", "kind": "set", "label": "Billing agent", "config": {"values": {"count": {"expr": "2"}}}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "triage"},
            {"id": "e2", "from": "triage", "to": "tech", "route": "billing"},
            {"id": "e3", "from": "triage", "to": "bill"},
            {"id": "e4", "from": "tech", "to": "end"},
            {"id": "e5", "from": "bill", "to": "end"}
        ]
    }));
    let report = heddle_engine::validate(&graph, &registry());
    let technical = report
        .problems
        .iter()
        .find(|p| matches!(&p.kind, ProblemKind::RouteWithoutEdge { route, .. } if route == "technical"))
        .unwrap_or_else(|| panic!("no problem for route technical:\n{report}"));
    assert_eq!(technical.fix, None, "{report}");
    assert_eq!(
        technical.message,
        "node `triage` may choose route `technical`, but no edge takes it"
    );
}

/// A support bot's router, its routes all routed, with no `otherwise`.
fn support_bot(otherwise: Option<&str>) -> heddle_engine::GraphDocument {
    let mut channels = channels();
    channels["messages"] = json!({"type": "messages", "reducer": "add_messages"});
    let mut router = json!({
        "routes": [
            {"route": "billing", "description": "money"},
            {"route": "technical", "description": "bugs"},
            {"route": "other", "description": "the rest"}
        ]
    });
    if let Some(otherwise) = otherwise {
        router["otherwise"] = json!(otherwise);
    }
    document(json!({
        "state": {"channels": channels},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "triage", "kind": "router", "label": "Triage", "config": router},
            {"id": "bill", "kind": "set", "label": "Billing", "config": {"values": {"count": {"expr": "1"}}}},
            {"id": "tech", "kind": "set", "label": "Tech", "config": {"values": {"count": {"expr": "2"}}}},
            {"id": "human", "kind": "set", "label": "A person", "config": {"values": {"count": {"expr": "3"}}}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "triage"},
            {"id": "e2", "from": "triage", "to": "bill", "route": "billing"},
            {"id": "e3", "from": "triage", "to": "tech", "route": "technical"},
            {"id": "e4", "from": "triage", "to": "human", "route": "other"},
            {"id": "e5", "from": "bill", "to": "end"},
            {"id": "e6", "from": "tech", "to": "end"},
            {"id": "e7", "from": "human", "to": "end"}
        ]
    }))
}

#[test]
fn a_router_with_no_otherwise_is_warned_and_its_catch_all_made_the_fallback_in_a_click() {
    use heddle_engine::validate::Fix;
    let mut graph = support_bot(None);
    let before = heddle_engine::validate(&graph, &registry());
    // A warning, at the field, not an error: the graph runs.
    assert!(!before.has_errors(), "{before}");
    let problem = find(&before, "nodes[1].config.otherwise");
    assert_eq!(problem.severity, Severity::Warning);
    assert_eq!(
        problem.kind,
        ProblemKind::NoFallback {
            node: "triage".into()
        }
    );
    assert_eq!(problem.node.as_ref().map(|n| n.as_str()), Some("triage"));
    let fix = problem.fix.clone().expect("a fix");
    assert_eq!(
        fix,
        Fix::SetFallback {
            node: "triage".into(),
            route: "other".into()
        }
    );
    assert_eq!(fix.label(), "Take `other` when no route fits");
    fix.apply(&mut graph);
    assert_eq!(graph, support_bot(Some("other")));
    let after = heddle_engine::validate(&graph, &registry());
    assert!(after.problems.is_empty(), "{after}");
    // Applied again, or on a router that has chosen its own, it changes
    // nothing.
    let mut chosen = support_bot(Some("billing"));
    fix.apply(&mut chosen);
    assert_eq!(chosen, support_bot(Some("billing")));
    // A condition's routes are the graph's own expressions: no warning.
    let condition = report(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "branch", "kind": "condition", "config": {"routes": [
                {"route": "big", "when": "count > 2"}, {"route": "small", "when": "count <= 2"}
            ]}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "branch"},
            {"id": "e2", "from": "branch", "to": "end", "route": "big"},
            {"id": "e3", "from": "branch", "to": "end", "route": "small"}
        ]
    }));
    assert!(condition.problems.is_empty(), "{condition}");
}

#[test]
fn an_edge_without_a_route_out_of_a_router_is_warned_unless_a_missing_route_is_offered_it() {
    // Every route has its edge, and one more leads on with none: it runs
    // `end` beside the route picked.
    let mut graph = support_bot(Some("other"));
    graph.edges.push(heddle_engine::format::EdgeSpec {
        id: "e8".into(),
        from: "triage".into(),
        to: "end".into(),
        route: None,
        condition: None,
    });
    let report = heddle_engine::validate(&graph, &registry());
    assert!(!report.has_errors(), "{report}");
    let problem = find(&report, "edges[7]");
    assert_eq!(problem.severity, Severity::Warning);
    assert_eq!(
        problem.kind,
        ProblemKind::TakenWhateverPicked {
            node: "triage".into(),
            to: "end".into()
        }
    );
    assert_eq!(problem.edge.as_ref().map(|e| e.as_str()), Some("e8"));
    // With a condition of its own it is the graph's choice: no warning.
    graph.edges[7].condition = Some("count > 2".into());
    let conditioned = heddle_engine::validate(&graph, &registry());
    assert!(conditioned.problems.is_empty(), "{conditioned}");
    // A route no edge carries is offered to the open edge (an error with
    // its fix), and the edge is not warned of twice.
    let mut missing = support_bot(Some("other"));
    missing.edges[3].route = None;
    let report = heddle_engine::validate(&missing, &registry());
    assert!(
        report
            .problems
            .iter()
            .all(|problem| !matches!(problem.kind, ProblemKind::TakenWhateverPicked { .. })),
        "{report}"
    );
    assert!(report.problems.iter().any(|problem| matches!(
        &problem.kind,
        ProblemKind::RouteWithoutEdge { route, .. } if route == "other"
    )));
    // An agent's edge without a route is its way on: no warning.
    let agent = heddle_engine::validate(
        &document(json!({
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [
                {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
                {"id": "helper", "kind": "agent", "config": {}},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "helper"},
                {"id": "e2", "from": "helper", "to": "end"}
            ]
        })),
        &registry(),
    );
    assert!(
        agent
            .problems
            .iter()
            .all(|problem| !matches!(problem.kind, ProblemKind::TakenWhateverPicked { .. })),
        "{agent}"
    );
}

#[test]
fn a_route_renamed_after_its_edge_was_routed_is_given_back_to_the_edge_in_a_click() {
    use heddle_engine::validate::Fix;
    let mut graph = support_bot(Some("human"));
    // `other` was renamed `human` in the router (and made the fallback);
    // the edge still carries `other`.
    graph.nodes[1].config["routes"][2]["route"] = json!("human");
    let before = heddle_engine::validate(&graph, &registry());
    let fix = Fix::RouteEdge {
        edge: "e4".into(),
        route: "human".into(),
        to: "A person".into(),
        was: Some("other".into()),
    };
    // Both sides of it carry the one fix: the edge's stale route and the
    // route with no edge.
    let edge = find(&before, "edges[3].route");
    assert!(
        matches!(edge.kind, ProblemKind::UnknownRoute { .. }),
        "{before}"
    );
    assert_eq!(edge.edge.as_ref().map(|e| e.as_str()), Some("e4"));
    assert_eq!(edge.fix.as_ref(), Some(&fix));
    let node = find(&before, "nodes[1].config");
    assert_eq!(node.fix.as_ref(), Some(&fix));
    assert_eq!(fix.label(), "Send `human` to A person, not `other`");
    fix.apply(&mut graph);
    assert_eq!(graph.edges[3].route.as_deref(), Some("human"));
    let after = heddle_engine::validate(&graph, &registry());
    assert!(after.problems.is_empty(), "{after}");
    // Stale: the edge carries another route by now.
    let mut again = graph.clone();
    fix.apply(&mut again);
    assert_eq!(again, graph);
}

#[test]
fn a_conversation_channel_made_by_a_fix_is_asked_for_at_the_start() {
    let report_of =
        |graph: &heddle_engine::GraphDocument| heddle_engine::validate(graph, &registry());
    let mut graph = document(json!({
        "state": {"channels": {}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "chat", "kind": "llm", "config": {"model": "offline"}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "chat"},
            {"id": "e2", "from": "chat", "to": "end"}
        ]
    }));
    let before = report_of(&graph);
    assert!(apply_fixes(&mut graph, &before) > 0, "{before}");
    let after = report_of(&graph);
    assert!(after.problems.is_empty(), "{after}");
    assert_eq!(graph.nodes[0].config, json!({"inputs": ["messages"]}));
    // Asked once: a start asking for a conversation already is left alone.
    let stale = heddle_engine::validate::Fix::AddChannel {
        channel: "history".into(),
        ty: heddle_engine::format::ChannelType::Messages,
    };
    stale.apply(&mut graph);
    assert_eq!(graph.nodes[0].config, json!({"inputs": ["messages"]}));
    assert!(graph.state.channels.contains_key("history"));
}

#[test]
fn every_fix_for_one_missing_channel_makes_it_a_conversation_when_a_node_needs_one() {
    // The start asks for `messages` (which alone would be made a string),
    // two llm nodes read it as their conversation.
    let mut graph = document(json!({
        "state": {"channels": {}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "a", "kind": "llm", "config": {"model": "offline"}},
            {"id": "b", "kind": "llm", "config": {"model": "offline"}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "a"},
            {"id": "e2", "from": "a", "to": "b"},
            {"id": "e3", "from": "b", "to": "end"}
        ]
    }));
    let report = heddle_engine::validate(&graph, &registry());
    let fixes: Vec<_> = report
        .problems
        .iter()
        .filter_map(|problem| problem.fix.clone())
        .collect();
    assert!(fixes.len() >= 3, "{report}");
    let conversation = heddle_engine::validate::Fix::AddChannel {
        channel: "messages".into(),
        ty: heddle_engine::format::ChannelType::Messages,
    };
    assert!(fixes.iter().all(|fix| *fix == conversation), "{fixes:?}");
    // The first pressed (the start's) fixes them all.
    let first = report.problems[0].fix.clone().expect("a fix");
    first.apply(&mut graph);
    let after = heddle_engine::validate(&graph, &registry());
    assert!(after.problems.is_empty(), "{after}");
}

#[test]
fn a_routers_route_without_a_description_is_warned_at_its_field() {
    let mut graph = support_bot(Some("other"));
    assert!(
        heddle_engine::validate(&graph, &registry())
            .problems
            .is_empty()
    );
    graph.nodes[1].config["routes"][1]["description"] = json!("  ");
    let report = heddle_engine::validate(&graph, &registry());
    assert!(!report.has_errors(), "{report}");
    let problem = find(&report, "nodes[1].config.routes[1].description");
    assert_eq!(problem.severity, Severity::Warning);
    assert_eq!(
        problem.kind,
        ProblemKind::RoutesUndescribed {
            node: "triage".into()
        }
    );
    assert_eq!(problem.node.as_ref().map(|n| n.as_str()), Some("triage"));
    assert_eq!(report.problems.len(), 1, "{report}");
    // One warning a router, at its first route without one.
    graph.nodes[1].config["routes"][0]["description"] = json!("");
    let report = heddle_engine::validate(&graph, &registry());
    assert_eq!(report.problems.len(), 1, "{report}");
    find(&report, "nodes[1].config.routes[0].description");
}

/// A join fed by two routes of one condition would wait for ever: warned
/// at the join, naming the condition and its routes. Parallel branches
/// into a join, and a branch that another way leads into too, are not.
#[test]
fn a_join_of_routes_only_one_of_which_is_taken_is_warned() {
    let graph = |extra_edge: Option<Value>| {
        let mut edges = vec![
            json!({"id": "e0", "from": "start", "to": "route"}),
            json!({"id": "e1", "from": "route", "to": "big", "route": "big"}),
            json!({"id": "e2", "from": "route", "to": "small", "route": "small"}),
            json!({"id": "e3", "from": "big", "to": "log"}),
            json!({"id": "e4", "from": "log", "to": "merge"}),
            json!({"id": "e5", "from": "small", "to": "merge"}),
            json!({"id": "e6", "from": "merge", "to": "end"}),
        ];
        edges.extend(extra_edge);
        json!({
            "state": {"channels": {"n": {"type": "integer"}, "size": {"type": "string"}}},
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "route", "kind": "condition", "config": {
                    "routes": [{"route": "big", "when": "n > 100"}], "otherwise": "small"
                }},
                {"id": "big", "kind": "set", "config": {"values": {"size": {"value": "big"}}}},
                {"id": "log", "kind": "set", "config": {"values": {"size": {"value": "logged"}}}},
                {"id": "small", "kind": "set", "config": {"values": {"size": {"value": "small"}}}},
                {"id": "merge", "kind": "join"},
                {"id": "end", "kind": "end"}
            ],
            "edges": edges
        })
    };
    let warned = report(graph(None));
    assert!(!warned.has_errors(), "{warned}");
    let problem = find(&warned, "nodes[5]");
    assert_eq!(problem.severity, Severity::Warning);
    assert_eq!(
        problem.kind,
        ProblemKind::JoinOfOneRoute {
            join: "merge".into(),
            chooser: "route".into(),
            routes: vec!["big".into(), "small".into()],
        }
    );
    assert_eq!(problem.node.as_ref().map(|n| n.as_str()), Some("merge"));
    assert_eq!(
        problem.message,
        "`merge` waits for the routes `big` and `small` of `route`, which takes only one of them: \
         it would wait for ever. Lead them into the next node without a join"
    );
    // `log` reached from `start` too: its branch may come either way.
    let either = report(graph(Some(
        json!({"id": "e7", "from": "start", "to": "log"}),
    )));
    assert!(
        !either
            .problems
            .iter()
            .any(|p| matches!(p.kind, ProblemKind::JoinOfOneRoute { .. })),
        "{either}"
    );
    // Parallel branches (no route between them) are what a join is for.
    let parallel = report(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "a", "kind": "set", "config": {"values": {"log": {"value": "a"}}}},
            {"id": "b", "kind": "set", "config": {"values": {"log": {"value": "b"}}}},
            {"id": "merge", "kind": "join"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "a"},
            {"id": "e2", "from": "start", "to": "b"},
            {"id": "e3", "from": "a", "to": "merge"},
            {"id": "e4", "from": "b", "to": "merge"}
        ]
    }));
    assert!(parallel.problems.is_empty(), "{parallel}");
}
