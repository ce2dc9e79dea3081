// SPDX-License-Identifier: MIT
// The Rust workload of record-unwind-lld: main -> top -> mid -> leaf, leaf holding
// nearly every sample. usage: chain [MILLISECONDS] (default 300)
use std::hint::black_box;

#[inline(never)]
fn leaf(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = s.wrapping_mul(31).wrapping_add(black_box(i));
    }
    s
}

#[inline(never)]
fn mid(n: u64) -> u64 {
    leaf(black_box(n)) ^ 1
}

#[inline(never)]
fn top(n: u64) -> u64 {
    mid(black_box(n)) + 1
}

fn main() {
    let ms: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300);
    let t = std::time::Instant::now();
    let mut acc = 0u64;
    while t.elapsed().as_millis() < ms as u128 {
        acc = acc.wrapping_add(top(black_box(20000)));
    }
    println!("{}", acc & 1);
}
