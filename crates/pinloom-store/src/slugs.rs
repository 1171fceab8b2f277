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

/// The first of `base`, `base-2`, `base-3`, … that `taken` says is free; `taken` may fail (it
/// usually asks the database), and its first failure is the answer.
pub fn unique_slug<E>(
    base: &str,
    mut taken: impl FnMut(&str) -> Result<bool, E>,
) -> Result<String, E> {
    if !taken(base)? {
        return Ok(base.to_owned());
    }
    let mut counter = 2_u64;
    loop {
        let candidate = format!("{base}-{counter}");
        if !taken(&candidate)? {
            return Ok(candidate);
        }
        counter += 1;
    }
}

/// Picks free slugs for many names at once, as [`unique_slug`] would one by one, without asking
/// again for the numbers it already saw taken: an import of ten thousand threads with one title
/// makes ten thousand probes, not fifty million.
#[derive(Debug, Default)]
pub(crate) struct SlugPicker {
    taken: std::collections::HashSet<String>,
    /// Per base, the number below which every `base-N` is taken.
    next: std::collections::HashMap<String, u64>,
}

impl SlugPicker {
    /// A picker for which the slugs in `taken` are already in use.
    pub(crate) fn new(taken: impl IntoIterator<Item = String>) -> SlugPicker {
        SlugPicker { taken: taken.into_iter().collect(), next: Default::default() }
    }

    /// The first of `base`, `base-2`, `base-3`, … not taken, which is taken from then on.
    pub(crate) fn pick(&mut self, base: &str) -> String {
        if self.taken.insert(base.to_owned()) {
            return base.to_owned();
        }
        let counter = self.next.entry(base.to_owned()).or_insert(2);
        loop {
            let candidate = format!("{base}-{counter}");
            *counter += 1;
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
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
    use super::{SlugPicker, slugify, unique_slug};

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
        let free = |base| unique_slug::<()>(base, |s| Ok(taken.contains(&s)));
        assert_eq!(free("auth"), Ok("auth-3".to_owned()));
        assert_eq!(free("api"), Ok("api".to_owned()));
        assert_eq!(unique_slug::<()>("", |s| Ok(s.is_empty())), Ok("-2".to_owned()));
        assert_eq!(unique_slug("x", |_| Err("no database")), Err("no database"));
    }

    #[test]
    fn the_picker_gives_what_unique_slug_would_one_by_one() {
        let mut taken: Vec<String> = ["auth", "auth-2", "auth-4", "main"].map(str::to_owned).into();
        let mut picker = SlugPicker::new(taken.clone());
        for base in ["auth", "auth", "api", "auth", "api", "auth-2", "main", "auth"] {
            let expected = unique_slug::<()>(base, |s| Ok(taken.iter().any(|t| t == s))).unwrap();
            assert_eq!(picker.pick(base), expected, "{base} after {taken:?}");
            taken.push(expected);
        }
    }
}
