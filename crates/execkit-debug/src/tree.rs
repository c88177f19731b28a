//! A session tree: the root session and the child sessions its adapter asked for with
//! `startDebugging` (debugpy opens one per Python subprocess). The tree is shared by the root,
//! every child and the tasks that open children, because children arrive while a call (a
//! `continue` waiting for a stop) holds the tool's state.
//!
//! It keeps what the whole tree shares: the children, a count of halts any session saw (so a
//! wait wakes whichever session stopped), a stamp per stop (the session that stopped last is
//! the target of thread-level actions), the breakpoint plan a new child is configured with,
//! and the session id counter.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use execkit_dap::BreakpointPlan;
use tokio::sync::watch;

use crate::session::Session;

/// At most this many children are opened per tree; a runaway fork loop must not start an
/// adapter connection per process.
pub const MAX_CHILDREN: usize = 16;

pub struct Tree {
    children: Mutex<Vec<Arc<Session>>>,
    /// Slots taken by children opened or being opened.
    reserved: AtomicUsize,
    stamps: AtomicU64,
    halts: watch::Sender<u64>,
    plan: Mutex<BreakpointPlan>,
    ids: Arc<AtomicU64>,
    closed: AtomicBool,
}

impl Tree {
    pub fn new(ids: Arc<AtomicU64>, plan: BreakpointPlan) -> Tree {
        Tree {
            children: Mutex::default(),
            reserved: AtomicUsize::new(0),
            stamps: AtomicU64::new(0),
            halts: watch::Sender::new(0),
            plan: Mutex::new(plan),
            ids,
            closed: AtomicBool::new(false),
        }
    }

    /// The next `debug-N`; ids are never reused within a Toolkit.
    pub fn next_id(&self) -> String {
        format!("debug-{}", self.ids.fetch_add(1, Ordering::SeqCst))
    }

    /// Takes a child slot; false when the tree is full or closing.
    pub fn reserve(&self) -> bool {
        !self.is_closed() && self.reserved.fetch_add(1, Ordering::SeqCst) < MAX_CHILDREN
    }

    /// Adds an opened child; false (the caller ends it) when the tree closed meanwhile.
    pub fn add(&self, child: Arc<Session>) -> bool {
        let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_closed() {
            return false;
        }
        children.push(child);
        drop(children);
        // A wait may have looked for this child's halts before it joined.
        self.halted();
        true
    }

    /// Every child, oldest first.
    pub fn children(&self) -> Vec<Arc<Session>> {
        self.children.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Closes the tree (no child opens after this) and hands over its children.
    pub fn close(&self) -> Vec<Arc<Session>> {
        let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
        self.closed.store(true, Ordering::SeqCst);
        std::mem::take(&mut *children)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// A number that grows with every stop in the tree.
    pub fn stamp(&self) -> u64 {
        self.stamps.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Wakes every wait: some session halted.
    pub fn halted(&self) {
        self.halts.send_modify(|n| *n += 1);
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.halts.subscribe()
    }

    /// The breakpoint set a new child is configured with.
    pub fn plan(&self) -> BreakpointPlan {
        self.plan.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn set_plan(&self, plan: BreakpointPlan) {
        *self.plan.lock().unwrap_or_else(|e| e.into_inner()) = plan;
    }
}

/// The root, then its children, oldest first.
pub fn members(root: &Arc<Session>) -> Vec<Arc<Session>> {
    let mut all = vec![root.clone()];
    all.extend(root.tree.children());
    all
}

/// The session thread-level actions go to: the live session that stopped last (the root
/// when none stopped, or when none is live).
pub fn target(root: &Arc<Session>) -> Arc<Session> {
    let mut best: Option<(u64, Arc<Session>)> = None;
    for session in members(root).into_iter().filter(|s| s.status().is_live()) {
        let stamp = session.with(|s| s.stop_stamp);
        // The root comes first, so it wins a tie (no stop at all).
        if best.as_ref().is_none_or(|(b, _)| stamp > *b) {
            best = Some((stamp, session));
        }
    }
    best.map_or_else(|| root.clone(), |(_, session)| session)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_sixteen_children_and_none_once_closed() {
        let tree = Tree::new(Arc::new(AtomicU64::new(1)), BreakpointPlan::default());
        assert!((0..MAX_CHILDREN).all(|_| tree.reserve()));
        assert!(!tree.reserve(), "the seventeenth child is refused");
        let fresh = Tree::new(Arc::new(AtomicU64::new(1)), BreakpointPlan::default());
        assert!(fresh.close().is_empty());
        assert!(!fresh.reserve(), "a closed tree opens no child");
    }

    #[test]
    fn ids_continue_the_shared_count_and_stamps_grow() {
        let ids = Arc::new(AtomicU64::new(3));
        let tree = Tree::new(ids.clone(), BreakpointPlan::default());
        assert_eq!((tree.next_id(), tree.next_id()), ("debug-3".into(), "debug-4".into()));
        assert_eq!(ids.load(Ordering::SeqCst), 5);
        let first = tree.stamp();
        assert!(tree.stamp() > first);
    }
}
