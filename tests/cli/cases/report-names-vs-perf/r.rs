// Rust names for report-names-vs-perf: a free function and a method of a generic type,
// built with v0 mangling (_R...) and with legacy mangling (_ZN...17h<hash>E).
#[inline(never)]
fn hot_loop(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = s.wrapping_add(i.wrapping_mul(i) ^ (s >> 3));
    }
    s
}
struct Wrap<T>(T);
impl<T: Copy + Into<u64>> Wrap<T> {
    #[inline(never)]
    fn spin(&self, n: u64) -> u64 {
        let v: u64 = self.0.into();
        let mut s = v;
        for i in 0..n {
            s = s.wrapping_mul(31).wrapping_add(i ^ (s >> 7));
        }
        s ^ hot_loop(n)
    }
}
fn main() {
    let w = Wrap(3u32);
    let mut t = 0u64;
    for _ in 0..20 {
        t = t.wrapping_add(w.spin(std::hint::black_box(2_000_000)));
    }
    println!("{}", t & 1);
}
