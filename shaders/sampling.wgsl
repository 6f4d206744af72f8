// sampling.wgsl — one token per row of logits, on the GPU, seedable: greedy, or temperature with
// top-k and top-p (nucleus), drawn with a counter-based hash of (seed, step, row).
// Twin: src/reference/sampling.ts (the exact rules). Launcher: src/gpu/kernels/sampling.ts.
//
// sample_tokens
//   Bindings: 0 params (uniform), 1 logits f32 (row r at rowOffset + r·rowStride, V entries),
//             2 scratch [N, V] f32 (e_v of the row, reused by the later passes),
//             3 tokens u32 (row r's token at outOffset + r·outStride, so a decode step can
//             write straight into a token history).
//   Dispatch: (N) workgroups of 64; one workgroup per row.
//   Computes, with no sort: each logit maps to an order-preserving u32 key; the top-k threshold
//   is the key of the k-th largest logit, found by a 4-pass radix select (per pass, a 256-bin
//   histogram of the next 8 key bits among the keys matching the bits fixed so far, counted
//   with integer workgroup atomics; exact and order-independent).
//   e_v = exp((x_v − max)/τ) for tokens at or above it go to scratch; the top-p threshold is
//   the largest key whose kept mass Σ_{key ≥ θ} e_v reaches p · (top-k mass), again by binary
//   search. The draw: u ∈ [0,1) from the hash; each thread sums the kept e_v of a contiguous
//   chunk of ids, thread 0 scans the 64 chunk sums, and the thread whose chunk holds u · total
//   walks it to the token. Every sum has a fixed order, so a (seed, step, row) always gives the
//   same token. Greedy (τ = 0 or k = 1) is an argmax reduction, ties to the lowest id.

struct Params {
  N: u32,
  V: u32,
  topK: u32,        // 0 = off
  seed: u32,
  step: u32,
  rowStride: u32,
  rowOffset: u32,
  outOffset: u32,
  outStride: u32,
  invTemp: f32,
  topP: f32,        // 1 = off
  greedy: u32,
}

// 64 threads, and reductions that cost two barriers (every thread sums the 64 partials in the
// same order) rather than a log-depth tree: barriers dominate on CPU WebGPU (SwiftShader).
const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read_write> scratch: array<f32>;
@group(0) @binding(3) var<storage, read_write> tokens: array<u32>;

var<workgroup> redF: array<f32, WG>;
var<workgroup> redU: array<u32, WG>;
var<workgroup> chunkStart: array<f32, WG>;
var<workgroup> lastNonEmpty: u32;
var<workgroup> hist: array<atomic<u32>, 256>;
const CAND: u32 = 256u;
var<workgroup> candKey: array<u32, CAND>;
var<workgroup> candE: array<f32, CAND>;
var<workgroup> candCount: u32;

fn mix32(v: u32) -> u32 {
  var x = v;
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}

fn uniform01(seed: u32, step: u32, row: u32) -> f32 {
  var h = mix32(row + 0x9e3779b9u);
  h = mix32(h ^ (step + 0x85ebca6bu));
  h = mix32(h ^ (seed + 0xc2b2ae35u));
  return f32(h >> 8u) * (1.0 / 16777216.0);
}

// Order-preserving map of f32 onto u32: larger float, larger key.
fn key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x80000000u) != 0u) { return ~b; }
  return b | 0x80000000u;
}

fn sum_f(tid: u32, x: f32) -> f32 {
  redF[tid] = x;
  workgroupBarrier();
  var r = 0.0;
  for (var i = 0u; i < WG; i++) { r += redF[i]; }
  workgroupBarrier();
  return r;
}

// Upper midpoint of [lo, hi] without overflow: ceil((lo + hi) / 2).
fn upper_mid(lo: u32, hi: u32) -> u32 {
  let d = hi - lo;
  return lo + (d >> 1u) + (d & 1u);
}

// Top-p: binary search for the largest key in [lo, hi] whose kept mass Σ_{key ≥ θ} e_v reaches
// `need`, over the `compacted` candidates in workgroup memory, or (compacted = 0) over the row's
// V logits (keys) and their e_v in scratch from `row`. Every thread takes part (sum_f's barriers).
fn top_p_threshold(tid: u32, lo0: u32, hi0: u32, need: f32, compacted: u32, base: u32, row: u32) -> u32 {
  var lo = lo0;
  var hi = hi0;
  for (var it = 0u; it < 32u; it++) {
    let mid = upper_mid(lo, hi);
    var m = 0.0;
    if (compacted > 0u) {
      for (var c = tid; c < compacted; c += WG) {
        if (candKey[c] >= mid) { m += candE[c]; }
      }
    } else {
      for (var v = tid; v < p.V; v += WG) {
        if (key(logits[base + v]) >= mid) { m += scratch[row + v]; }
      }
    }
    let mass = sum_f(tid, m);
    if (mass >= need) { lo = mid; } else { hi = mid - 1u; }
  }
  return lo;
}

@compute @workgroup_size(64)
fn sample_tokens(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let r = wg.x;
  let base = p.rowOffset + r * p.rowStride;
  let V = p.V;

  // Max logit and its lowest id: the greedy answer, and the softmax shift otherwise.
  var best = -3.4e38;
  var bestId = 0xffffffffu;
  for (var v = tid; v < V; v += WG) {
    let x = logits[base + v];
    if (x > best || bestId == 0xffffffffu) { best = x; bestId = v; }
  }
  redF[tid] = best;
  redU[tid] = bestId;
  workgroupBarrier();
  // Strided partials: among equal maxima the lowest id must win explicitly.
  var xMax = redF[0];
  var argmax = redU[0];
  for (var i = 1u; i < WG; i++) {
    let better = redF[i] > xMax || (redF[i] == xMax && redU[i] < argmax);
    if (redU[i] != 0xffffffffu && (better || argmax == 0xffffffffu)) {
      xMax = redF[i];
      argmax = redU[i];
    }
  }
  workgroupBarrier();
  let out = p.outOffset + r * p.outStride;
  if (p.greedy != 0u) {
    if (tid == 0u) { tokens[out] = argmax; }
    return;
  }

  // Top-k threshold on keys (0 keeps everything): radix select, 8 bits of the key per pass.
  // Each pass counts, among the keys that match the digits fixed so far, how many have each
  // value of the next digit; scanning those 256 counts from the top fixes the digit holding
  // the k-th largest. Four passes land exactly on its key. Integer counts: order-free and exact.
  var thrK = 0u;
  if (p.topK > 0u && p.topK < V) {
    var prefix = 0u;
    var mask = 0u;
    var kRem = p.topK;
    for (var round = 0u; round < 4u; round++) {
      let shift = 24u - 8u * round;
      for (var i = tid; i < 256u; i += WG) { atomicStore(&hist[i], 0u); }
      workgroupBarrier();
      for (var v = tid; v < V; v += WG) {
        let kk = key(logits[base + v]);
        if ((kk & mask) == prefix) { atomicAdd(&hist[(kk >> shift) & 255u], 1u); }
      }
      workgroupBarrier();
      var above = 0u;
      var digit = 0u;
      for (var dd = 0u; dd < 256u; dd++) {
        let d = 255u - dd;
        let c = atomicLoad(&hist[d]);
        if (above + c >= kRem) { digit = d; break; }
        above += c;
      }
      kRem -= above;
      prefix |= digit << shift;
      mask |= 255u << shift;
      workgroupBarrier();
    }
    thrK = prefix;
  }

  // Unnormalised probabilities of the tokens top-k keeps.
  let zMax = xMax * p.invTemp;
  var part = 0.0;
  for (var v = tid; v < V; v += WG) {
    let x = logits[base + v];
    var e = 0.0;
    if (key(x) >= thrK) { e = exp(x * p.invTemp - zMax); }
    scratch[r * V + v] = e;
    part += e;
  }
  let massK = sum_f(tid, part);

  // Top-p threshold: the largest key whose mass at or above reaches topP · massK. After top-k
  // the survivors are usually few: when at most CAND, they are compacted (in id order, so the
  // sums keep a fixed order) into workgroup memory and searched there instead of over V.
  var thr = thrK;
  var compacted = 0u; // survivors in candKey / candE, or 0: search over V
  if (p.topP < 1.0 && p.topK > 0u && p.topK < V) {
    let chunk = (V + WG - 1u) / WG;
    let v0 = min(V, tid * chunk);
    let v1 = min(V, v0 + chunk);
    var cnt = 0u;
    for (var v = v0; v < v1; v++) { cnt += select(0u, 1u, key(logits[base + v]) >= thrK); }
    redU[tid] = cnt;
    workgroupBarrier();
    if (tid == 0u) {
      var acc = 0u;
      for (var i = 0u; i < WG; i++) {
        let c = redU[i];
        redU[i] = acc;
        acc += c;
      }
      candCount = acc;
    }
    let total = workgroupUniformLoad(&candCount);
    if (total <= CAND) {
      var slot = redU[tid];
      for (var v = v0; v < v1; v++) {
        let kk = key(logits[base + v]);
        if (kk >= thrK) {
          candKey[slot] = kk;
          candE[slot] = scratch[r * V + v];
          slot++;
        }
      }
      compacted = total;
    }
    workgroupBarrier();
  }
  if (p.topP < 1.0) { thr = top_p_threshold(tid, thrK, key(xMax), p.topP * massK, compacted, base, r * V); }

  // The draw: chunk sums, a scan of them by thread 0, then one thread walks its chunk.
  let chunk = (V + WG - 1u) / WG;
  let v0 = min(V, tid * chunk);
  let v1 = min(V, v0 + chunk);
  var mine = 0.0;
  for (var v = v0; v < v1; v++) {
    if (key(logits[base + v]) >= thr) { mine += scratch[r * V + v]; }
  }
  redF[tid] = mine;
  workgroupBarrier();
  if (tid == 0u) {
    var acc = 0.0;
    var lastNE = 0u;
    for (var i = 0u; i < WG; i++) {
      chunkStart[i] = acc;
      acc += redF[i];
      if (redF[i] > 0.0) { lastNE = i; }
    }
    lastNonEmpty = lastNE;
    redU[0] = bitcast<u32>(acc);
  }
  workgroupBarrier();
  let total = bitcast<f32>(redU[0]);
  let goal = uniform01(p.seed, p.step, r) * total;
  let start = chunkStart[tid];
  if (mine > 0.0 && goal >= start && (goal < start + mine || tid == lastNonEmpty)) {
    var cum = start;
    var chosen = 0xffffffffu;
    var lastKept = v0;
    for (var v = v0; v < v1; v++) {
      if (key(logits[base + v]) >= thr) {
        lastKept = v;
        cum += scratch[r * V + v];
        if (goal < cum) { chosen = v; break; }
      }
    }
    if (chosen == 0xffffffffu) { chosen = lastKept; }
    tokens[out] = chosen;
  }
}
