//! The two things every part of the application layer needs from its surroundings: a blocking
//! thread for store work, and the clock. A leaf module, so that the parts that need them do not
//! import each other for them.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;

/// Runs store work on tokio's blocking pool: a SQLite call can wait up to the busy timeout on
/// another process's lock, and must never stall the async executor while it does.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(work).await.context("a database task stopped unexpectedly")?
}

/// Now, in milliseconds since the Unix epoch, as the store writes times.
pub(crate) fn now_ms() -> i64 {
    // A clock before 1970 is a broken machine; 0 keeps ordering sane rather than failing a write.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Does `work` to every item, the items shared out over as many threads as the machine has
/// (counting the tokens of a whole tree's messages, say).
pub(crate) fn on_every_core<T: Send>(items: &mut [T], work: impl Fn(&mut T) + Sync) {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let share = items.len().div_ceil(threads).max(1);
    let work = &work;
    std::thread::scope(|scope| {
        for chunk in items.chunks_mut(share) {
            scope.spawn(move || chunk.iter_mut().for_each(work));
        }
    });
}
