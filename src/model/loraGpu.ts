// LoRA on the GPU (lora.ts has the layout and the maths): the low-rank update of every adapted
// projection, forward and backward, with our matmul kernel and the columns kernel. GpuBlocks calls
// it at four sites of a block, right after the frozen projection wrote its output:
//
//   forward   u = x·A                      [rows, r]   (kept per layer for the backward)
//             y (+)= s · u·B               whole output (o, down): one matmul with beta = 1;
//                                          a block of columns (q, k, v, gate, up): u·B into a
//                                          scratch, then the columns kernel adds s times it
//   backward  g = s · dy (its columns)     whole: folded into the matmuls' alpha; columns: gathered
//             dB += uᵀ·g,  du = g·Bᵀ,  dA += xᵀ·du,  dx += du·Aᵀ
//
// The frozen weights get no gradient; only the adapter's flat buffer has one.
import { ColumnsKernel } from '../gpu/kernels/columns.ts';
import type { ColumnsShape } from '../reference/columns.ts';
import type { Disposable } from '../gpu/kernels/common.ts';
import { MatmulKernel } from '../gpu/kernels/matmul.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import type { MatmulShape } from '../reference/matmul.ts';
import type { LoraLayout, LoraPair, LoraSite } from './lora.ts';

interface PairKernels {
  pair: LoraPair;
  whole: boolean;
  u: GPUBuffer;
  down: MatmulKernel;
  up: MatmulKernel;
  add?: ColumnsKernel;
  gather?: ColumnsKernel;
  dB?: MatmulKernel;
  du?: MatmulKernel;
  dA?: MatmulKernel;
  dx?: MatmulKernel;
}

export interface LoraShape {
  rows: number;
  backward: boolean;
}

export class GpuLora {
  private readonly made: Disposable[] = [];
  private readonly owned: GPUBuffer[] = [];
  private bySite: Map<string, PairKernels[]> = new Map();
  private scratch!: GPUBuffer;
  private du!: GPUBuffer;

  private constructor(
    readonly rt: GpuRuntime,
    readonly layout: LoraLayout,
    readonly shape: LoraShape,
  ) {}

  static async create(rt: GpuRuntime, layout: LoraLayout, shape: LoraShape): Promise<GpuLora> {
    const g = new GpuLora(rt, layout, shape);
    const width = Math.max(1, ...layout.pairs.map((p) => p.outDim));
    g.scratch = g.buf('lora.scratch', shape.rows * width);
    g.du = g.buf('lora.du', shape.rows * layout.settings.rank);
    for (const p of layout.pairs) {
      const k = await g.pairKernels(p);
      const key = `${p.layer}.${p.site}`;
      g.bySite.set(key, [...(g.bySite.get(key) ?? []), k]);
    }
    return g;
  }

  private buf(label: string, n: number): GPUBuffer {
    const b = this.rt.storage(label, n * 4);
    this.owned.push(b);
    return b;
  }

  private async mm(s: MatmulShape): Promise<MatmulKernel> {
    const k = await MatmulKernel.create(this.rt, s);
    this.made.push(k);
    return k;
  }

  private async cols(s: ColumnsShape): Promise<ColumnsKernel> {
    const k = await ColumnsKernel.create(this.rt, s);
    this.made.push(k);
    return k;
  }

  private async pairKernels(p: LoraPair): Promise<PairKernels> {
    const { rows, backward } = this.shape;
    const r = this.layout.settings.rank;
    const s = this.layout.scale;
    const whole = p.col === 0 && p.outDim === p.baseWidth;
    const u = this.buf(`lora.u.${p.layer}.${p.target}`, rows * r);
    const down = await this.mm({ M: rows, N: r, K: p.inDim, offsetB: p.A.offset });
    const up = await this.mm({ M: rows, N: p.outDim, K: r, offsetB: p.B.offset, ...(whole ? { alpha: s, beta: 1 } : {}) });
    const k: PairKernels = { pair: p, whole, u, down, up };
    if (!whole)
      k.add = await this.cols({ rows, width: p.outDim, srcWidth: p.outDim, srcOffset: 0, dstWidth: p.baseWidth, dstOffset: p.col, alpha: s, accumulate: true });
    if (!backward) return k;
    const g = whole ? s : 1;
    if (!whole) k.gather = await this.cols({ rows, width: p.outDim, srcWidth: p.baseWidth, srcOffset: p.col, dstWidth: p.outDim, dstOffset: 0, alpha: s });
    k.dB = await this.mm({ M: r, N: p.outDim, K: rows, transA: true, offsetC: p.B.offset, alpha: g, beta: 1 });
    k.du = await this.mm({ M: rows, N: r, K: p.outDim, transB: true, offsetB: p.B.offset, alpha: g });
    k.dA = await this.mm({ M: p.inDim, N: r, K: rows, transA: true, offsetC: p.A.offset, beta: 1 });
    k.dx = await this.mm({ M: rows, N: p.inDim, K: r, transB: true, offsetB: p.A.offset, beta: 1 });
    return k;
  }

  /** Adds the updates of layer `layer`'s targets at `site` into `y` (x: the projection's input). */
  encodeForward(pass: GPUComputePassEncoder, LP: GPUBuffer, layer: number, site: LoraSite, x: GPUBuffer, y: GPUBuffer): void {
    for (const k of this.bySite.get(`${layer}.${site}`) ?? []) {
      k.down.encode(pass, x, LP, k.u);
      if (k.whole) {
        k.up.encode(pass, k.u, LP, y);
      } else {
        k.up.encode(pass, k.u, LP, this.scratch);
        k.add!.encode(pass, this.scratch, y);
      }
    }
  }

  /** From dy (the gradient of the site's output): the adapter's gradients into LG, and du·Aᵀ added into dx. */
  encodeBackward(pass: GPUComputePassEncoder, LP: GPUBuffer, LG: GPUBuffer, layer: number, site: LoraSite, x: GPUBuffer, dy: GPUBuffer, dx: GPUBuffer): void {
    for (const k of this.bySite.get(`${layer}.${site}`) ?? []) {
      if (!k.dB) throw new Error('GpuLora: built without the backward');
      let g = dy;
      if (!k.whole) {
        k.gather!.encode(pass, dy, this.scratch);
        g = this.scratch;
      }
      k.dB.encode(pass, k.u, g, LG);
      k.du!.encode(pass, g, LP, this.du);
      k.dA!.encode(pass, x, this.du, LG);
      k.dx!.encode(pass, this.du, LP, dx);
    }
  }

  bytes(): number {
    return this.owned.reduce((n, b) => n + b.size, 0);
  }

  dispose(): void {
    for (const k of this.made) k.dispose();
    this.rt.release(...this.owned);
    this.made.length = 0;
    this.owned.length = 0;
  }
}
