// A small shop API whose routes spend CPU in distinctly named functions, so a flame graph per
// endpoint shows where each one goes. Prints `listening <port>` once ready (PORT, default 3000;
// 0 picks a free port; HOST, default 127.0.0.1, 0.0.0.0 in a container). SHOP_PRICE_CART_WORK
// (default 1) multiplies the checkout's hot loop: 1.3 makes priceCart 30% slower, a regression for
// `pyro-run diff` to find (docs/diff.md).
import express from 'express';

const CATALOG = Array.from({ length: 2000 }, (_, i) => ({
  id: i,
  name: `product ${i} ${['red', 'green', 'blue', 'black'][i % 4]} ${['mug', 'shirt', 'lamp', 'chair'][(i % 7) % 4]}`,
  price: 5 + ((i * 37) % 200),
}));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Scores every product against the query: the search endpoint's hot loop. */
function rankResults(query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const scored = [];
  for (let round = 0; round < 20; round++) {
    for (const product of CATALOG) {
      let score = 0;
      for (const word of words) if (new RegExp(`\\b${word}`).test(product.name)) score += 10 - round / 10;
      if (score > 0 && round === 0) scored.push({ product, score });
    }
  }
  return scored.sort((a, b) => b.score - a.score).slice(0, 20);
}

const PRICING_PASSES = Math.round(40_000 * Number(process.env.SHOP_PRICE_CART_WORK ?? 1));

/** Prices a cart with tax tables and rounding rules: the checkout endpoint's hot loop. */
function priceCart(items) {
  let total = 0;
  for (let pass = 0; pass < PRICING_PASSES; pass++) {
    total = 0;
    for (const { id, quantity } of items) {
      const unit = CATALOG[id % CATALOG.length].price;
      total += Math.round(unit * quantity * (1 + Math.sin(pass) * 0.0001) * 100) / 100;
    }
  }
  return total;
}

function applyDiscounts(total) {
  let discounted = total;
  for (let i = 0; i < 200_000; i++) discounted = Math.max(0, discounted - Math.sqrt(i) * 1e-9);
  return discounted;
}

/** Builds the recommendations shown with a product page. */
function recommend(id) {
  const seen = new Map();
  for (let i = 0; i < 60_000; i++) {
    const other = (id * 31 + i * 17) % CATALOG.length;
    seen.set(other, (seen.get(other) ?? 0) + Math.cos(i));
  }
  return [...seen.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([other]) => CATALOG[other]);
}

const app = express();
app.use(express.json());

app.get('/search', async (req, res) => {
  const results = rankResults(String(req.query.q ?? 'red mug'));
  await sleep(2); // a cache lookup
  res.json({ count: results.length, results });
});

app.post('/checkout', async (req, res) => {
  const items = Array.isArray(req.body?.items) ? req.body.items : [{ id: 1, quantity: 1 }];
  const subtotal = priceCart(items);
  await sleep(5); // the payment provider
  res.json({ total: applyDiscounts(subtotal) });
});

app.get('/products/:id', (req, res) => {
  const id = Number(req.params.id) % CATALOG.length;
  setImmediate(() => res.json({ product: CATALOG[id], recommended: recommend(id) }));
});

const server = app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
