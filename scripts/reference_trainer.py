#!/usr/bin/env python3
"""The reference trainer: a recipe of src/train/recipe.ts trained in PyTorch on the CPU.

It trains the same network on the same rows as `lwm train --recipe`: scripts/recipe-batches.ts
writes the recipe's batches (token ids, targets, loss weights), its loss normaliser, schedule,
AdamW settings and initial checkpoint; this script trains GPT-2 blocks (LayerNorm, tanh-GELU,
learned positions or RoPE, tied embeddings: the `quick` preset) on them with our AdamW (decoupled decay on
the matrices only, the global gradient norm clipped, bias correction) and our loss
(sum of w * CE over the batch, divided by the run's normaliser), and writes our checkpoint format
(weights, tokenizer, template, spec), which `lwm infer --backend local` reads.

    python scripts/reference_trainer.py --recipe quick --domain terminal -o OUT.safetensors

A development tool, never part of `npm test`: its requirements are in
scripts/reference_trainer.requirements.txt. `--parity FILE` records the first --steps losses
as the fixture the GPU parity test (src/train/recipe.gpu.test.ts) compares against.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_batches(args, work):
    cmd = ["npx", "tsx", "--import", "./bin/raw-hook.mjs", "scripts/recipe-batches.ts", "--recipe", args.recipe, "--domain", args.domain, "--out", work]
    if args.steps:
        cmd += ["--steps", str(args.steps)]
    if args.batch:
        cmd += ["--batch", str(args.batch)]
    if args.tasks:
        cmd += ["--tasks", args.tasks]
    if args.task_n:
        cmd += ["--task-n", str(args.task_n)]
    if args.rows:
        cmd += ["--rows", args.rows]
    if args.tasks_only:
        cmd += ["--tasks-only"]
    if args.seed is not None:
        cmd += ["--seed", str(args.seed)]
    if args.task_solver_share is not None:
        cmd += ["--task-solver-share", str(args.task_solver_share)]
    if args.answer_room:
        cmd += ["--answer-room", str(args.answer_room)]
    subprocess.run(cmd, cwd=ROOT, check=True)


def load_batches(work, prefix, count, B, T):
    shape = (count, B, T)
    inputs = np.fromfile(os.path.join(work, f"{prefix}.inputs.u16"), dtype=np.uint16).reshape(shape)
    targets = np.fromfile(os.path.join(work, f"{prefix}.targets.u16"), dtype=np.uint16).reshape(shape)
    weights = np.fromfile(os.path.join(work, f"{prefix}.weights.f32"), dtype=np.float32).reshape(shape)
    return inputs, targets, weights


class Gpt:
    """GPT-2 blocks over a dict of tensors named as our checkpoints name them (Conv1D layout: x @ W)."""

    def __init__(self, config, params):
        for key, want in (("norm", "layernorm"), ("tiedEmbeddings", True)):
            if config.get(key) != want:
                raise SystemExit(f"reference trainer: config {key} must be {want!r}, got {config.get(key)!r}")
        if config["positions"] not in ("learned", "rope") or config.get("ropeScaling", "none") != "none":
            raise SystemExit(f"reference trainer: positions must be learned or plain rope, got {config['positions']!r}")
        if config.get("mlp", "gelu") != "gelu" or config.get("kvHeads", config["heads"]) != config["heads"]:
            raise SystemExit("reference trainer: only GPT-2 blocks (GELU MLP, full heads) are supported")
        self.c = config
        self.p = params

    def forward(self, inputs):
        c, p = self.c, self.p
        B, T = inputs.shape
        d, H = c["dModel"], c["heads"]
        hs = d // H
        eps = c["normEps"]
        x = p["wte.weight"][inputs]
        if c["positions"] == "learned":
            x = x + p["wpe.weight"][:T]
        else:
            # src/reference/rope.ts: pairs (i, i + hs/2) rotated by t * base^(-2i/hs), q and k only.
            freq = c["ropeBase"] ** (-2 * torch.arange(hs // 2, dtype=torch.float64) / hs)
            theta = torch.arange(T, dtype=torch.float64)[:, None] * freq[None, :]
            cos, sin = theta.cos().float().to(x.device), theta.sin().float().to(x.device)
        for i in range(c["layers"]):
            q = f"h.{i}."
            h = F.layer_norm(x, (d,), p[q + "ln_1.weight"], p[q + "ln_1.bias"], eps)
            qkv = h @ p[q + "attn.c_attn.weight"] + p[q + "attn.c_attn.bias"]
            qh, kh, vh = (t.view(B, T, H, hs).transpose(1, 2) for t in qkv.split(d, dim=2))
            if c["positions"] == "rope":
                qh, kh = rotate(qh, cos, sin), rotate(kh, cos, sin)
            a = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
            a = a.transpose(1, 2).reshape(B, T, d)
            x = x + a @ p[q + "attn.c_proj.weight"] + p[q + "attn.c_proj.bias"]
            h = F.layer_norm(x, (d,), p[q + "ln_2.weight"], p[q + "ln_2.bias"], eps)
            h = F.gelu(h @ p[q + "mlp.c_fc.weight"] + p[q + "mlp.c_fc.bias"], approximate="tanh")
            x = x + h @ p[q + "mlp.c_proj.weight"] + p[q + "mlp.c_proj.bias"]
        x = F.layer_norm(x, (d,), p["ln_f.weight"], p["ln_f.bias"], eps)
        return x @ p["wte.weight"].T


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)


def weighted_ce(model, inputs, targets, weights):
    """(sum of w * CE, sum of w) over a batch; positions of weight 0 add nothing."""
    logits = model.forward(inputs)
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")
    w = weights.reshape(-1)
    return (ce * w).sum(), w.sum()


def lr_at(step, s):
    """src/core/model/optim.ts lrAt: linear warmup from step 0, then a half cosine to min_lr."""
    if step < s["warmup_steps"]:
        return s["max_lr"] * (step + 1) / s["warmup_steps"]
    if step >= s["total_steps"]:
        return s["min_lr"]
    progress = (step - s["warmup_steps"]) / max(1, s["total_steps"] - s["warmup_steps"])
    return s["min_lr"] + 0.5 * (1 + math.cos(math.pi * progress)) * (s["max_lr"] - s["min_lr"])


class AdamW:
    """src/reference/adamw.ts: clip by the global norm, moments, decoupled decay, bias-corrected step."""

    def __init__(self, params, decayed, cfg):
        self.params = params
        self.decayed = set(decayed)
        self.cfg = cfg
        self.m = {k: torch.zeros_like(v) for k, v in params.items()}
        self.v = {k: torch.zeros_like(v) for k, v in params.items()}

    @torch.no_grad()
    def step(self, step, lr):
        c = self.cfg
        norm = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in self.params.values()))
        scale = min(1.0, c["max_grad_norm"] / (norm + 1e-6)) if c["max_grad_norm"] > 0 else 1.0
        t = step + 1
        bc1 = 1 - c["beta1"] ** t
        bc2 = 1 - c["beta2"] ** t
        for k, p in self.params.items():
            g = p.grad * scale
            m, v = self.m[k], self.v[k]
            m.mul_(c["beta1"]).add_(g, alpha=1 - c["beta1"])
            v.mul_(c["beta2"]).addcmul_(g, g, value=1 - c["beta2"])
            if k in self.decayed:
                p.sub_(p * (lr * c["weight_decay"]))
            p.sub_(lr * (m / bc1) / ((v / bc2).sqrt() + c["eps"]))
            p.grad = None
        return norm


def save(params, metadata, step, path):
    """Our checkpoint: the initial checkpoint's metadata (config, tokenizer, template, spec) with the trained weights."""
    meta = dict(metadata)
    meta["step"] = str(step)
    save_file({k: v.detach().cpu().contiguous() for k, v in params.items()}, path, metadata=meta)


def batch_at(batches, k, device):
    inputs, targets, weights = batches
    return (torch.from_numpy(inputs[k].astype(np.int64)).to(device), torch.from_numpy(targets[k].astype(np.int64)).to(device), torch.from_numpy(weights[k]).to(device))


def evaluate(model, batches, device):
    total = 0.0
    with torch.no_grad():
        for k in range(batches[0].shape[0]):
            s, w = weighted_ce(model, *batch_at(batches, k, device))
            total += float(s / w) if float(w) > 0 else 0.0
    return total / max(1, batches[0].shape[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recipe", default="quick")
    ap.add_argument("--domain", default="terminal")
    ap.add_argument("-o", "--out", required=True, help="the checkpoint to write (our safetensors format)")
    ap.add_argument("--tasks", help="add the recipe's task-play trajectories of these task families (lwm train --recipe --tasks)")
    ap.add_argument("--task-n", type=int, help="with --tasks: this many task-play trajectories instead of the recipe's share")
    ap.add_argument("--tasks-only", action="store_true", help="with --tasks and --task-n: train on the task-play trajectories alone, not the recipe's")
    ap.add_argument("--seed", type=int, help="the run's seed instead of the recipe's (initial weights, split, row order), a replicate")
    ap.add_argument("--task-solver-share", type=float, help="with --tasks and --task-n: the share of task-play episodes the reference solver plays (default 0.5)")
    ap.add_argument("--answer-room", type=int, help="lay rows out as a generator leaving N tokens for its answer sees them (TrainSpec.answerRoom)")
    ap.add_argument("--rows", choices=("turn", "trajectory"), help="the row kind instead of the recipe's (lwm train --rows)")
    ap.add_argument("--work", help="folder for the batches (default: OUT's name + .batches)")
    ap.add_argument("--steps", type=int, help="train only the first N steps (the schedule still spans the recipe)")
    ap.add_argument("--batch", type=int, help="rows per step instead of the recipe's (the parity fixture's smaller batch)")
    ap.add_argument("--metrics", help="JSON lines as `lwm train --metrics` writes them")
    ap.add_argument("--parity", help="write the losses of the trained steps as the GPU parity test's fixture")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    ap.add_argument("--device", default="cpu", help="torch device to train on (cpu, cuda); the batches and the checkpoint are the same either way")
    ap.add_argument("--reuse", action="store_true", help="reuse the batches already in --work")
    ap.add_argument("--checkpoint-every", type=int, default=0, help="also write OUT.stepN.safetensors every N steps (score against FLOPs)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    work = args.work or (args.out + ".batches")
    if not (args.reuse and os.path.exists(os.path.join(work, "manifest.json"))):
        write_batches(args, work)
    man = json.load(open(os.path.join(work, "manifest.json")))
    B, T, steps = man["B"], man["T"], min(man["steps"], args.steps or man["steps"])
    train = load_batches(work, "train", man["steps"], B, T)
    evals = load_batches(work, "eval", man["eval_batches"], B, T)
    init_path = os.path.join(work, "init.safetensors")
    with safe_open(init_path, framework="pt") as f:
        metadata = f.metadata()
        params = {k: f.get_tensor(k).float().to(args.device).clone().requires_grad_(True) for k in f.keys()}
    model = Gpt(man["config"], params)
    opt = AdamW(params, man["decayed"], man["adamw"])
    metrics = open(args.metrics, "w") if args.metrics else None
    record = {"recipe": man["recipe"], "domain": man["domain"], "B": B, "T": T, "steps": steps, "sha256": man["sha256"]["train"], "losses": [], "grad_norms": [], "lrs": []}
    t0 = time.time()
    tokens = 0

    def emit(line):
        line = {"stage": "sft", "time_s": round(time.time() - t0, 3), **line}
        if metrics:
            metrics.write(json.dumps(line) + "\n")
            metrics.flush()

    for step in range(steps):
        lr = lr_at(step, man["schedule"])
        s, w = weighted_ce(model, *batch_at(train, step, args.device))
        (s / man["loss_norm"]).backward()
        norm = opt.step(step, lr)
        loss = float(s.detach() / w) if float(w) > 0 else 0.0
        tokens += B * T
        record["losses"].append(loss)
        record["grad_norms"].append(norm)
        record["lrs"].append(lr)
        emit({"step": step + 1, "loss": loss, "lr": lr, "grad_norm": norm, "tokens_per_s": tokens / max(1e-9, time.time() - t0)})
        if (step + 1) % man["eval_every"] == 0 or step + 1 == steps:
            ev = evaluate(model, evals, args.device)
            emit({"step": step + 1, "eval_loss": ev})
            print(f"[sft {step + 1}/{steps}] loss {loss:.4f}  eval_loss {ev:.4f}  {tokens / (time.time() - t0):.0f} tokens/s", file=sys.stderr, flush=True)
        if args.checkpoint_every and (step + 1) % args.checkpoint_every == 0 and step + 1 < steps:
            save(params, metadata, step + 1, args.out.replace(".safetensors", "") + f".step{step + 1}.safetensors")
    seconds = time.time() - t0
    save(params, metadata, steps, args.out)
    if args.parity:
        with open(args.parity, "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
    print(json.dumps({"checkpoint": args.out, "steps": steps, "tokens": tokens, "seconds": round(seconds, 1), "tokens_per_s": round(tokens / seconds), "final_loss": record["losses"][-1]}))


if __name__ == "__main__":
    main()
