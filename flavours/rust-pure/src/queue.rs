//! A bounded single-producer single-consumer queue without locks: the pool's
//! front door hands accepted sockets to a worker through one.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Keeps the producer's and the consumer's counters on separate cache lines.
#[repr(align(64))]
struct Padded(AtomicUsize);

pub struct Spsc<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
    head: Padded, // next to pop; written by the consumer only
    tail: Padded, // next to push; written by the producer only
}

// SAFETY: a slot is written by the producer before tail is published (Release)
// and read by the consumer after it sees that tail (Acquire), and the reverse
// for head; no slot is ever accessed by both at once.
unsafe impl<T: Send> Sync for Spsc<T> {}
unsafe impl<T: Send> Send for Spsc<T> {}

impl<T> Spsc<T> {
    /// A queue of at least `capacity` slots (rounded up to a power of two).
    pub fn new(capacity: usize) -> Spsc<T> {
        let n = capacity.max(1).next_power_of_two();
        Spsc {
            slots: (0..n).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect(),
            mask: n - 1,
            head: Padded(AtomicUsize::new(0)),
            tail: Padded(AtomicUsize::new(0)),
        }
    }

    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// From the one producer: Err(v) when full.
    pub fn push(&self, v: T) -> Result<(), T> {
        let tail = self.tail.0.load(Ordering::Relaxed);
        if tail.wrapping_sub(self.head.0.load(Ordering::Acquire)) == self.capacity() {
            return Err(v);
        }
        // SAFETY: the slot at tail is free (not yet published, already popped).
        unsafe { (*self.slots[tail & self.mask].get()).as_mut_ptr().write(v) };
        self.tail.0.store(tail.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    /// From the one consumer: None when empty.
    pub fn pop(&self) -> Option<T> {
        let head = self.head.0.load(Ordering::Relaxed);
        if head == self.tail.0.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: the slot at head was published by the producer and not yet popped.
        let v = unsafe { (*self.slots[head & self.mask].get()).as_ptr().read() };
        self.head.0.store(head.wrapping_add(1), Ordering::Release);
        Some(v)
    }
}

impl<T> Drop for Spsc<T> {
    fn drop(&mut self) {
        while self.pop().is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn keeps_order_and_refuses_when_full() {
        let q = Spsc::new(3);
        assert_eq!(q.capacity(), 4);
        for i in 0..4 {
            q.push(i).unwrap();
        }
        assert_eq!(q.push(9), Err(9));
        assert_eq!(q.pop(), Some(0));
        q.push(4).unwrap();
        assert_eq!((1..5).map(|_| q.pop().unwrap()).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn hands_every_item_across_threads_in_order() {
        let q = Arc::new(Spsc::new(8));
        let n = 200_000u64;
        let producer = {
            let q = q.clone();
            std::thread::spawn(move || {
                for i in 0..n {
                    let mut v = i;
                    while let Err(back) = q.push(v) {
                        v = back;
                        std::hint::spin_loop();
                    }
                }
            })
        };
        let mut expect = 0;
        while expect < n {
            if let Some(v) = q.pop() {
                assert_eq!(v, expect);
                expect += 1;
            }
        }
        producer.join().unwrap();
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn drops_what_is_left() {
        let q = Spsc::new(4);
        let item = Arc::new(());
        q.push(item.clone()).unwrap();
        q.push(item.clone()).unwrap();
        drop(q);
        assert_eq!(Arc::strong_count(&item), 1);
    }
}
