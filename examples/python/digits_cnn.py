"""A PyTorch training script, run on graft by its import line alone.

Trains a small CNN on the bundled UCI digits (8x8 images, 10 classes) with a DataLoader, Adam
and a learning-rate schedule, saves a checkpoint half way, resumes from it in a fresh model
and optimizer, and reports test accuracy. Everything below the import is ordinary PyTorch:
replace the first line with `import torch` and it runs on PyTorch unchanged.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/digits_cnn.py [digits.csv] [checkpoint]
"""
import graft as torch

import os
import sys
import tempfile

import numpy as np

nn = torch.nn
F = torch.nn.functional
DataLoader = torch.utils.data.DataLoader
TensorDataset = torch.utils.data.TensorDataset


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    model.train()
    return (pred == y).float().mean().item()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    csv = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "data", "digits", "digits.csv")
    ckpt = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tempfile.gettempdir(), "digits_cnn_py.safetensors")
    torch.manual_seed(0)
    data = np.loadtxt(csv, delimiter=",", dtype=np.float32)
    images = torch.from_numpy(data[:, :64].copy()).reshape(-1, 1, 8, 8) / 16.0
    labels = torch.from_numpy(data[:, 64].astype(np.int64))
    order = torch.randperm(len(labels))
    test_idx, train_idx = order[:360], order[360:]
    train = TensorDataset(images[train_idx], labels[train_idx])
    loader = DataLoader(train, batch_size=64, shuffle=True, num_workers=2)

    model = DigitsNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    epochs = 12
    for epoch in range(epochs):
        total = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()  # .item(): keeping `loss` would keep its graph alive
        scheduler.step()
        print(f"epoch {epoch + 1:2d}  loss {total / len(loader):.4f}  lr {scheduler.get_last_lr()[0]:.5f}")
        if epoch + 1 == epochs // 2:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "epoch": epoch + 1}, ckpt)
            # resume in fresh objects, as after a restart
            del model, optimizer, scheduler
            state = torch.load(ckpt)
            model = DigitsNet()
            model.load_state_dict(state["model"])
            optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
            optimizer.load_state_dict(state["optimizer"])
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
            scheduler.load_state_dict(state["scheduler"])
            print(f"checkpoint written and resumed at epoch {state['epoch']}")

    acc = accuracy(model, images[test_idx], labels[test_idx])
    print(f"test accuracy {acc * 100:.2f}% on {len(test_idx)} images")
    return acc


if __name__ == "__main__":
    main()
