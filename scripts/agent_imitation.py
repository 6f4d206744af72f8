"""Imitation of an agent run's rows in PyTorch, to measure how many steps a fresh policy needs
before it copies a goal's values into its action (docs/method.md §13; FAMILY_IMITATION in
src/train/agent/budgets.ts). Reads scripts/agent-imitation-rows.ts's JSON and trains the bench
preset's shape (GPT-2 blocks, learned positions, tied embeddings, width 64, 2 layers, 4 heads)
on it as `lwm agent train` does: batches of 16 rows from a shuffle per epoch, loss on the action's
tokens only, AdamW (0.9, 0.95; weight decay 0.1 on the matrices), gradients clipped at 1, 10
warm-up steps, then a cosine to a tenth; initialised as src/model/init.ts does. Every --every steps it prints the loss and how many
held-out first actions greedy decoding writes exactly. The initialisation and the float rounding
are PyTorch's, so the step at which copying starts differs from the GPU trainer's, as it does
between seeds.

    python scripts/agent_imitation.py rows.json --steps 1200 --lr 3e-3 --seed 0

With --init CKPT --out OUT it starts from a fresh policy of the same run (`lwm agent train …
--sft-steps 0 --rl-steps 0 -o DIR` writes DIR/policy.safetensors: the same tokenizer, shape and
initial weights as the run's) and writes the imitated policy as OUT in our checkpoint format,
which `lwm agent train --policy OUT` goes on from: a copying policy for RL experiments in minutes
instead of the GPU trainer's hour on a CPU.
"""

import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, d = x.shape
        q, k, v = (t.view(B, T, self.heads, d // self.heads).transpose(1, 2) for t in self.attn(self.ln_1(x)).split(d, 2))
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, d))
        return x + self.out(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab, T, d, layers, heads):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(T, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        # src/model/init.ts: matrices and embeddings ~ N(0, 0.02²), the residual projections
        # scaled by 1/sqrt(2·layers); biases 0, norm gains 1.
        for name, p in self.named_parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * layers) if name.endswith(("proj.weight", "out.weight")) else 0.02)
            elif "ln" not in name:
                nn.init.zeros_(p)

    def forward(self, x):
        h = self.wte(x) + self.wpe(torch.arange(x.shape[1]))
        for b in self.blocks:
            h = b(h)
        return self.ln_f(h) @ self.wte.weight.T


# Our checkpoint's names for the module's weights. Our matrices are stored as x @ W (Conv1D), nn.Linear's as W @ x.
def checkpoint_names(layers):
    names = {"wte.weight": "wte.weight", "wpe.weight": "wpe.weight", "ln_f.weight": "ln_f.weight", "ln_f.bias": "ln_f.bias"}
    for i in range(layers):
        for ours, mine in (("ln_1", "ln_1"), ("ln_2", "ln_2"), ("attn.c_attn", "attn"), ("attn.c_proj", "proj"), ("mlp.c_fc", "fc"), ("mlp.c_proj", "out")):
            for kind in ("weight", "bias"):
                names[f"h.{i}.{ours}.{kind}"] = f"blocks.{i}.{mine}.{kind}"
    return names


def flip(ours, t):
    """A block's matrix between our x @ W layout and nn.Linear's W @ x (the same in both directions)."""
    return t.T if t.dim() == 2 and ours.startswith("h.") else t


def load_init(model, path, data, a):
    """A fresh policy checkpoint's weights into the module; its metadata, to write the trained policy with."""
    with safe_open(path, "pt") as f:
        meta = f.metadata()
        config = json.loads(meta["config"])
        want = {"vocabSize": data["vocab"], "contextLength": data["T"], "dModel": a.d, "layers": a.layers, "heads": a.heads, "positions": "learned", "norm": "layernorm", "tiedEmbeddings": True}
        for k, v in want.items():
            if config.get(k) != v:
                raise SystemExit(f"{path}: config {k} is {config.get(k)!r}, the rows and options want {v!r}")
        if "tokenizer" not in meta or json.loads(meta["tokenizer"]) != data["tokenizer"]:
            raise SystemExit(f"{path}: its tokenizer is not the one the rows were written with (write both from the same run's settings)")
        params = dict(model.named_parameters())
        names = checkpoint_names(a.layers)
        if set(f.keys()) != set(names):
            raise SystemExit(f"{path}: weights {sorted(set(f.keys()) ^ set(names))} differ from a GPT-2 policy's")
        with torch.no_grad():
            for ours, mine in names.items():
                params[mine].copy_(flip(ours, f.get_tensor(ours).float()))
    return meta


def save_policy(model, meta, steps, path, layers):
    params = dict(model.named_parameters())
    out = {}
    for ours, mine in checkpoint_names(layers).items():
        out[ours] = flip(ours, params[mine].detach()).contiguous()
    save_file(out, path, metadata={**meta, "step": str(steps)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--init", help="a fresh policy checkpoint of the run to start from (its weights, checked against the rows' tokenizer)")
    ap.add_argument("--out", help="with --init: write the trained policy here (our checkpoint format)")
    a = ap.parse_args()
    if a.out and not a.init:
        raise SystemExit("--out needs --init: the checkpoint takes its tokenizer and settings from the fresh policy")
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    data = json.load(open(a.rows))
    V, T, pad, end = data["vocab"], data["T"], data["pad"], data["end"]
    rows, held = data["rows"], data["held"]
    model = Gpt(V, T, a.d, a.layers, a.heads)
    meta = load_init(model, a.init, data, a) if a.init else None
    # Weight decay on the matrices only, as src/core/model/params.ts: not embeddings, norms or biases.
    matrices = [p for n, p in model.named_parameters() if p.dim() > 1 and not n.startswith(("wte", "wpe"))]
    others = [p for n, p in model.named_parameters() if not (p.dim() > 1 and not n.startswith(("wte", "wpe")))]
    groups = [{"params": matrices, "weight_decay": 0.1}, {"params": others, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=a.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(a.seed)

    def batch(idx):
        X, Y, W = (torch.full((len(idx), T), pad), torch.full((len(idx), T), pad), torch.zeros(len(idx), T))
        for b, i in enumerate(idx):
            ids, n = rows[i]["prompt"] + rows[i]["target"], len(rows[i]["prompt"])
            for t in range(min(len(ids) - 1, T)):
                X[b, t], Y[b, t], W[b, t] = ids[t], ids[t + 1], float(t + 1 >= n)
        return X, Y, W

    @torch.no_grad()
    def exact():
        model.eval()
        right = 0
        for h in held:
            ids = list(h["prompt"])
            for _ in range(len(h["target"]) + 1):
                ids.append(int(model(torch.tensor([ids[-T:]]))[0, -1].argmax()))
                if ids[-1] == end:
                    break
            right += ids[len(h["prompt"]) :] == h["target"]
        model.train()
        return right

    order, t0, warm = [], time.time(), min(10, a.steps)
    for step in range(a.steps):
        if len(order) < a.batch:
            order += torch.randperm(len(rows), generator=gen).tolist()
        idx, order = order[: a.batch], order[a.batch :]
        if step < warm:
            lr = a.lr * (step + 1) / warm
        else:
            lr = a.lr / 10 + 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, a.steps - warm))) * (a.lr - a.lr / 10)
        for g in opt.param_groups:
            g["lr"] = lr
        X, Y, W = batch(idx)
        ce = F.cross_entropy(model(X).reshape(-1, V), Y.reshape(-1), reduction="none")
        loss = (ce * W.reshape(-1)).sum() / W.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (step + 1) % a.every == 0:
            print(f"step {step + 1}  loss {loss.item():.3f}  held-out exact {exact()}/{len(held)}  {time.time() - t0:.0f} s", flush=True)
    if a.out:
        save_policy(model, meta, a.steps, a.out, a.layers)
        print(f"policy → {a.out}", flush=True)


if __name__ == "__main__":
    main()
