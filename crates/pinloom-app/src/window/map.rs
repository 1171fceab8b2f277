//! The tree map as a picture: where each message of a tree is drawn. Depth runs across, lanes run
//! down. A chain of messages in one thread is one run on one lane however long it is; every other
//! child (a branch, a regenerated reply, a pin's first message) starts a run of its own on a lane
//! below its parent's, joined by an elbow at the message it continues from. Lanes are reused
//! wherever they are free, so a long thread with a hundred short pins is one lane below it, not a
//! hundred; an elbow crosses another run only where branches overlap in depth (see
//! [`Lanes::place`]).
//!
//! The placing is a pure function of the tree's shape ([`lay_out`]), tested here without a store.

use std::collections::HashMap;

use pinloom_store::{Author, NodeId, Pin, ShapeRow, TreeId};

use crate::base::pinloom::Pinloom;
use crate::json::{MapPin, MapRun, TreeMapView};

/// How much of a pin's anchor the map carries for its hover card.
const ANCHOR_CHARS: usize = 300;

impl Pinloom {
    /// The tree map of tree `tree_id`: every live message placed on a lane.
    pub async fn tree_map(&self, tree_id: i64) -> anyhow::Result<TreeMapView> {
        self.read("could not draw the tree map", move |store| {
            let rows = store.tree_shape(TreeId(tree_id))?;
            let pins = store.all_pins(TreeId(tree_id))?;
            Ok(lay_out(&rows, &pins))
        })
        .await
    }
}

/// A pending run: its first message (an index into the rows), the position in `ids` of the
/// message it continues from, and its depth.
struct Pending {
    row: usize,
    from: Option<u32>,
    depth: u32,
}

/// Places every message of `rows` (a tree's live messages in write order; a message whose parent
/// is not among them is left out with its subtree) and names the live `pins`.
pub(in crate::window) fn lay_out(rows: &[ShapeRow], pins: &[Pin]) -> TreeMapView {
    let position: HashMap<NodeId, usize> =
        rows.iter().enumerate().map(|(index, row)| (row.id, index)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); rows.len()];
    let mut roots = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        match row.parent_id {
            None => roots.push(index),
            Some(parent) => {
                if let Some(&parent) = position.get(&parent) {
                    children[parent].push(index);
                }
            }
        }
    }

    let mut ids = Vec::with_capacity(rows.len());
    let mut authors = String::with_capacity(rows.len());
    let mut runs: Vec<MapRun> = Vec::new();
    // The run each placed message belongs to, by its position in `ids`.
    let mut run_of: Vec<u32> = Vec::with_capacity(rows.len());
    let mut lanes = Lanes::default();
    let mut depths = 0;
    // Depth first without recursion (a thread can be 100,000 messages long). A run's branches
    // are pushed as the walk meets them, so the deepest branch is placed first, nearest its
    // parent's lane: the shallower ones go around it and no elbow crosses a run.
    let mut pending: Vec<Pending> =
        roots.iter().rev().map(|&row| Pending { row, from: None, depth: 0 }).collect();
    while let Some(Pending { row: start, from, depth }) = pending.pop() {
        let run_index = u32::try_from(runs.len()).unwrap_or(u32::MAX);
        let first = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        let thread = rows[start].pin_id;
        let mut row = start;
        let mut message_depth = depth;
        loop {
            let here = u32::try_from(ids.len()).unwrap_or(u32::MAX);
            ids.push(rows[row].id.0);
            authors.push(match rows[row].author {
                Author::Human => 'h',
                Author::Model => 'm',
                Author::Tool => 't',
            });
            run_of.push(run_index);
            // The run goes on through the first child in the same thread; a pin's first message
            // always starts a run of its own, so that every pin is seen branching off.
            let next = children[row].iter().copied().find(|&child| rows[child].pin_id == thread);
            for &child in children[row].iter().rev().filter(|&&child| Some(child) != next) {
                pending.push(Pending { row: child, from: Some(here), depth: message_depth + 1 });
            }
            match next {
                Some(child) => {
                    row = child;
                    message_depth += 1;
                }
                None => break,
            }
        }
        let len = u32::try_from(ids.len()).unwrap_or(u32::MAX) - first;
        let last_depth = depth + len - 1;
        depths = depths.max(last_depth + 1);
        let lane = match from {
            None => lanes.place(None, depth, last_depth),
            Some(from) => {
                lanes.place(Some(runs[run_of[from as usize] as usize].lane), depth, last_depth)
            }
        };
        runs.push(MapRun { first, len, lane, depth, from, pin_id: thread.map(|pin| pin.0) });
    }

    TreeMapView {
        ids,
        authors,
        runs,
        pins: pins
            .iter()
            .filter(|pin| pin.deleted_at_ms.is_none())
            .map(|pin| MapPin {
                id: pin.id.0,
                title: pin.title.clone(),
                anchor: pin
                    .anchor
                    .as_ref()
                    .map(|anchor| anchor.text.chars().take(ANCHOR_CHARS).collect()),
                closed: pin.closed_at_ms.is_some(),
            })
            .collect(),
        lanes: lanes.count(),
        depths,
    }
}

/// What each lane holds: the depths its runs' messages take, as sorted, disjoint, inclusive
/// ranges, and the depths where an elbow passes it or turns into it.
#[derive(Default)]
struct Lanes {
    messages: Vec<Vec<(u32, u32)>>,
    elbows: Vec<Vec<u32>>,
}

impl Lanes {
    /// The lane for a run whose messages take depths `first..=last`. A root run takes a new lane
    /// below every lane taken: a tree of several roots is drawn as that many bands, one below the
    /// other. A run that continues a message on lane `parent` (at depth `first - 1`) has an
    /// elbow: down from that message, then across into its first message. It takes the first
    /// lane below `parent` free for its messages and its elbow's corner, or, a few lanes further
    /// at most, the first one where the elbow's way down passes no message and no other elbow
    /// passes the run. Elbows from one message share their way down, as the branches of one fork
    /// do. Further than that detour, branches overlapping in depth would stack a lane each (a
    /// staircase as tall as the tree has branches), so the elbow crosses instead.
    fn place(&mut self, parent: Option<u32>, first: u32, last: u32) -> u32 {
        /// How many lanes past the first free one a run may go to spare a crossing.
        const DETOUR: u32 = 3;
        let Some(parent) = parent else {
            let lane = self.count();
            self.take(lane, first, last);
            return lane;
        };
        let turn = first - 1;
        let mut free = parent + 1;
        while !self.is_free(free, turn, last) {
            free += 1;
        }
        let clear = |lane: u32| {
            self.is_free(lane, turn, last)
                && self.elbows_between(lane, first, last) == 0
                && (parent + 1..lane).all(|between| !self.holds_message(between, turn))
        };
        let lane = (free..=free + DETOUR).find(|&lane| clear(lane)).unwrap_or(free);
        self.take(lane, first, last);
        for passed in parent + 1..=lane {
            self.mark_elbow(passed, turn);
        }
        lane
    }

    /// No message of `lane` lies within `from..=to`.
    fn is_free(&self, lane: u32, from: u32, to: u32) -> bool {
        let Some(ranges) = self.messages.get(lane as usize) else { return true };
        // The last range starting at or before `to` is the only one that can reach `from`.
        let before = ranges.partition_point(|&(start, _)| start <= to);
        before == 0 || ranges[before - 1].1 < from
    }

    fn holds_message(&self, lane: u32, depth: u32) -> bool {
        !self.is_free(lane, depth, depth)
    }

    fn elbows_between(&self, lane: u32, from: u32, to: u32) -> usize {
        let Some(elbows) = self.elbows.get(lane as usize) else { return 0 };
        elbows.partition_point(|&depth| depth <= to) - elbows.partition_point(|&depth| depth < from)
    }

    fn take(&mut self, lane: u32, from: u32, to: u32) {
        let lane = lane as usize;
        if self.messages.len() <= lane {
            self.messages.resize_with(lane + 1, Vec::new);
        }
        let ranges = &mut self.messages[lane];
        let at = ranges.partition_point(|&(start, _)| start < from);
        ranges.insert(at, (from, to));
    }

    fn mark_elbow(&mut self, lane: u32, depth: u32) {
        let lane = lane as usize;
        if self.elbows.len() <= lane {
            self.elbows.resize_with(lane + 1, Vec::new);
        }
        let elbows = &mut self.elbows[lane];
        let at = elbows.partition_point(|&at| at < depth);
        elbows.insert(at, depth);
    }

    fn count(&self) -> u32 {
        u32::try_from(self.messages.len()).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pinloom_store::PinId;

    /// Rows from `(parent, pin)` pairs: message `i` has id `i + 1`, authors alternate.
    fn rows(shape: &[(Option<usize>, Option<i64>)]) -> Vec<ShapeRow> {
        shape
            .iter()
            .enumerate()
            .map(|(index, &(parent, pin))| ShapeRow {
                id: NodeId(index as i64 + 1),
                parent_id: parent.map(|parent| NodeId(parent as i64 + 1)),
                pin_id: pin.map(PinId),
                author: if index % 2 == 0 { Author::Human } else { Author::Model },
            })
            .collect()
    }

    /// Where each message id was placed: `(lane, depth)`.
    fn places(map: &TreeMapView) -> HashMap<i64, (u32, u32)> {
        let mut places = HashMap::new();
        for run in &map.runs {
            for offset in 0..run.len {
                places
                    .insert(map.ids[(run.first + offset) as usize], (run.lane, run.depth + offset));
            }
        }
        places
    }

    #[test]
    fn a_long_chain_is_one_run_on_one_lane() {
        let shape: Vec<_> = (0..100_000).map(|i: usize| (i.checked_sub(1), None)).collect();
        let map = lay_out(&rows(&shape), &[]);
        assert_eq!(map.runs.len(), 1);
        assert_eq!(
            map.runs[0],
            MapRun { first: 0, len: 100_000, lane: 0, depth: 0, from: None, pin_id: None }
        );
        assert_eq!((map.lanes, map.depths), (1, 100_000));
        assert_eq!(map.authors.len(), 100_000);
        assert!(map.authors.starts_with("hmhm"));
    }

    #[test]
    fn a_branch_starts_a_run_below_and_the_thread_goes_on_through_its_first_child() {
        // 0 - 1 - 2 - 3, and 4 branching from 1 (a regenerated reply), 5 after 4.
        let map = lay_out(
            &rows(&[
                (None, None),
                (Some(0), None),
                (Some(1), None),
                (Some(2), None),
                (Some(1), None),
                (Some(4), None),
            ]),
            &[],
        );
        let places = places(&map);
        assert_eq!(places[&4], (0, 3), "the first child continues the lane");
        assert_eq!(places[&5], (1, 2), "the branch is one lane down, one deeper than its parent");
        assert_eq!(places[&6], (1, 3));
        assert_eq!(map.runs[1].from, Some(1), "it continues message 2 (position 1)");
        assert_eq!(map.ids[1], 2);
    }

    #[test]
    fn a_pin_always_branches_off_even_as_its_anchor_s_only_child() {
        // 0 - 1 in the root thread; pin 7 opens from 1 with 2 - 3.
        let map = lay_out(
            &rows(&[(None, None), (Some(0), None), (Some(1), Some(7)), (Some(2), Some(7))]),
            &[],
        );
        assert_eq!(map.runs.len(), 2);
        assert_eq!(map.runs[1].pin_id, Some(7));
        assert_eq!(map.runs[1].len, 2);
        assert_eq!(places(&map)[&3], (1, 2));
    }

    #[test]
    fn short_pins_along_a_long_thread_share_a_lane_without_crossing() {
        // A thread of 1,000 messages with a three-message pin every 100 messages.
        let mut shape: Vec<(Option<usize>, Option<i64>)> =
            (0..1_000).map(|i: usize| (i.checked_sub(1), None)).collect();
        for pin in 0..10 {
            let anchor = pin * 100 + 50;
            shape.push((Some(anchor), Some(pin as i64 + 1)));
            for _ in 0..2 {
                shape.push((Some(shape.len() - 1), Some(pin as i64 + 1)));
            }
        }
        let rows = rows(&shape);
        let map = lay_out(&rows, &[]);
        check_placed(&rows, &map, true);
        assert_eq!(map.runs.len(), 11);
        assert_eq!(map.lanes, 2, "ten pins, one lane");
    }

    /// What every map must hold: each message placed once, no two on one place, each one's parent
    /// the message before it on its run or the message its run continues (on a lane above, one
    /// depth less); with `no_crossings`, also no elbow's way down passing a message.
    fn check_placed(rows: &[ShapeRow], map: &TreeMapView, no_crossings: bool) {
        let places = places(map);
        assert_eq!(places.len(), rows.len(), "every message placed once");
        assert_eq!(map.authors.len(), rows.len());
        let taken: HashMap<(u32, u32), i64> =
            places.iter().map(|(&id, &place)| (place, id)).collect();
        assert_eq!(taken.len(), places.len(), "two messages share a place");
        let parent_of: HashMap<i64, Option<i64>> =
            rows.iter().map(|row| (row.id.0, row.parent_id.map(|p| p.0))).collect();
        for run in &map.runs {
            assert!(run.lane < map.lanes && run.depth + run.len <= map.depths);
            for offset in 0..run.len {
                let at = (run.first + offset) as usize;
                let expected = if offset == 0 {
                    run.from.map(|from| map.ids[from as usize])
                } else {
                    Some(map.ids[at - 1])
                };
                assert_eq!(parent_of[&map.ids[at]], expected);
            }
            let Some(from) = run.from else { continue };
            let (parent_lane, parent_depth) = places[&map.ids[from as usize]];
            assert_eq!(parent_depth + 1, run.depth);
            assert!(parent_lane < run.lane);
            for lane in (parent_lane + 1..=run.lane).filter(|_| no_crossings) {
                let crossed = taken.get(&(lane, parent_depth));
                assert!(
                    crossed.is_none(),
                    "the elbow into {:?} crosses message {crossed:?}",
                    (run.lane, run.depth)
                );
            }
        }
    }

    #[test]
    fn a_bushy_tree_is_placed_compactly() {
        // Every message of a 300-message thread has a branch; every third branch has two more
        // messages, a branch of its own and a pin.
        let mut shape: Vec<(Option<usize>, Option<i64>)> =
            (0..300).map(|i: usize| (i.checked_sub(1), None)).collect();
        for spine in 0..300 {
            shape.push((Some(spine), None));
            if spine % 3 == 0 {
                let branch = shape.len() - 1;
                shape.push((Some(branch), None));
                shape.push((Some(branch + 1), None));
                shape.push((Some(branch), Some(1)));
            }
        }
        let rows = rows(&shape);
        let map = lay_out(&rows, &[]);
        check_placed(&rows, &map, false);
        assert!(map.lanes <= 8, "{} lanes", map.lanes);
    }

    #[test]
    fn the_large_benchmark_tree_is_a_few_lanes_tall() {
        // The shape of the 100,000-message tree the benchmarks and the window test import: a
        // thread of 10,000 messages and 900 branches of 100 hanging off it evenly, every tenth a
        // pin. About ten branches overlap at any depth; the detours add a few lanes to that.
        let mut shape: Vec<(Option<usize>, Option<i64>)> =
            (0..10_000).map(|i: usize| (i.checked_sub(1), None)).collect();
        for branch in 0..900 {
            let pin = (branch % 10 == 0).then_some(branch as i64 + 1);
            let mut parent = branch * 10_000 / 900;
            for _ in 0..100 {
                shape.push((Some(parent), pin));
                parent = shape.len() - 1;
            }
        }
        let rows = rows(&shape);
        let map = lay_out(&rows, &[]);
        check_placed(&rows, &map, false);
        assert_eq!(map.runs.len(), 901);
        assert!(map.lanes <= 16, "{} lanes", map.lanes);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Any tree: each message hangs off an earlier one (or is a root), in the thread of its
        /// parent or in a pin of its own. Branches overlapping in depth make crossings that a
        /// compact map cannot avoid: they are allowed here.
        #[test]
        fn any_tree_is_placed_once_each_beside_its_parent(
            links in proptest::collection::vec((0.0f64..1.0, 0u8..10), 1..400),
        ) {
            let mut shape: Vec<(Option<usize>, Option<i64>)> = Vec::new();
            for (index, &(at, kind)) in links.iter().enumerate() {
                // Mostly the latest message (long chains), sometimes anywhere before.
                let parent = match (index, kind) {
                    (0, _) | (_, 0) => None,
                    (_, 1..=5) => Some(index - 1),
                    _ => Some((at * index as f64) as usize),
                };
                let pin = match (parent, kind) {
                    (Some(_), 9) => Some(index as i64),
                    (Some(parent), _) => shape[parent].1,
                    (None, _) => None,
                };
                shape.push((parent, pin));
            }
            let rows = rows(&shape);
            check_placed(&rows, &lay_out(&rows, &[]), false);
        }
    }

    #[test]
    fn a_message_whose_parent_is_gone_is_left_out_with_what_follows() {
        // 0 - 1 - 2; 3 hangs off a message (id 99) that is not live, 4 follows 3.
        let mut rows =
            rows(&[(None, None), (Some(0), None), (Some(1), None), (None, None), (Some(3), None)]);
        rows[3].parent_id = Some(NodeId(99));
        let map = lay_out(&rows, &[]);
        assert_eq!(map.ids, vec![1, 2, 3]);
    }
}
