/// Every command the window may call. build.rs reads this list to generate their permissions, and
/// a test checks it against the registered handlers, so a command cannot be added without a grant.
pub const ALL: &[&str] = &[
    "tree_create",
    "tree_list",
    "tree_open",
    "message_append",
    "preferences_get",
    "preferences_set",
    "thread_view",
    "pin_view",
    "reply_start",
    "reply_stop",
    "pin_create",
    "pin_close",
    "node_mark",
    "context_preview",
    "context_preview_unsaved",
    "nodes_compare",
    "profiles_list",
    "profile_save",
];
