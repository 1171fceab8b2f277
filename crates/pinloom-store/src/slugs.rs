//! ThreadMind's ids: a project (a tree) and a thread (a pin) are named by a slug of their title,
//! made unique with `-2`, `-3`, … The root thread of every tree is `main`.
//!
//! The rules are ThreadMind v0.4.1's, JavaScript's regular expressions included, so that an id an
//! agent learnt from ThreadMind is the id Pinloom gives the same title: letters are lower-cased,
//! everything but ASCII letters, digits, `_`, `-` and whitespace is dropped (so "Héllo" becomes
//! "hllo"), runs of whitespace and `_` become one `-`, and dashes at either end go.

/// The id of every tree's root thread.
pub const ROOT_THREAD_SLUG: &str = "main";

/// ThreadMind's `slugify` of a title.
pub fn slugify(title: &str) -> String {
    let lowered = title.to_lowercase();
    let trimmed = lowered.trim_matches(is_js_whitespace);
    let mut slug = String::with_capacity(trimmed.len());
    let mut pending_dash = false;
    for c in trimmed.chars() {
        if c.is_ascii_alphanumeric() {
            // A run before the first kept character is a leading dash, which the final trim of
            // `^-+|-+$` removes; a run after the last one is the trailing dash it removes.
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push(c);
        } else if c == '-' || c == '_' || is_js_whitespace(c) {
            // `[\s_]+` becomes one dash and `-+` collapses to one; both are the same run here.
            pending_dash = true;
        }
        // Anything else is removed without separating what is on either side of it.
    }
    slug
}

/// The first of `base`, `base-2`, `base-3`, … that `taken` does not hold.
pub fn unique_slug(base: &str, mut taken: impl FnMut(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_owned();
    }
    (2_u64..)
        .map(|counter| format!("{base}-{counter}"))
        .find(|candidate| !taken(candidate))
        .unwrap_or_else(|| base.to_owned())
}

/// JavaScript's `\s` and `String.prototype.trim` set, which differs from Rust's
/// `char::is_whitespace` (it has U+FEFF and lacks U+0085).
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::{slugify, unique_slug};

    #[test]
    fn slugs_follow_threadminds_javascript_rules() {
        assert_eq!(slugify("My App"), "my-app");
        assert_eq!(slugify("Auth UI"), "auth-ui");
        assert_eq!(slugify("  Héllo, Wörld!! 2024 -- Test_case  "), "hllo-wrld-2024-test-case");
        assert_eq!(slugify("!!!"), "");
        assert_eq!(slugify("a\u{FEFF}b"), "a-b", "U+FEFF is whitespace to JavaScript");
        assert_eq!(slugify("a\u{85}b"), "ab", "U+0085 is not");
        assert_eq!(slugify("--a__b--"), "a-b");
        assert_eq!(slugify(" é a"), "a");
        assert_eq!(slugify("a.b"), "ab", "a dropped character joins its neighbours");
        assert_eq!(slugify("\u{212A}elvin"), "kelvin", "full Unicode lower-casing first");
    }

    #[test]
    fn collisions_count_up_from_two() {
        let taken = ["auth", "auth-2"];
        assert_eq!(unique_slug("auth", |s| taken.contains(&s)), "auth-3");
        assert_eq!(unique_slug("api", |s| taken.contains(&s)), "api");
        assert_eq!(unique_slug("", |s| s.is_empty()), "-2");
    }
}
