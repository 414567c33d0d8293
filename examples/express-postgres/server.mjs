// An order-reporting API over PostgreSQL: the revenue report does real work in the database (a
// join and a group by over the order lines) and then in JavaScript (buildRevenueReport), so a
// request's flame graph shows both the pg client reading the rows and the code using them.
// DATABASE_URL names the database; the schema and seed data are created on start when missing.
// Prints `listening <port>` once ready (PORT, default 3000; 0 picks a free port; HOST, default
// 127.0.0.1).
import express from 'express';
import pg from 'pg';

const REGIONS = ['north', 'south', 'east', 'west', 'central'];
const CATEGORIES = ['books', 'games', 'garden', 'kitchen', 'music', 'outdoor', 'tools', 'toys'];
const ORDERS = 6000;
/** The seeded quarter: 2024-01-01 and the 90 days after it. */
const DAYS = 91;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

/** Deterministic data, generated inside PostgreSQL: 6000 orders over a quarter with 1–4 lines each (~15000 lines). */
const SEED = [
  `INSERT INTO orders (customer_id, region, placed_at, status)
   SELECT 1 + (i * 7919) % 1500,
          ($1::text[])[1 + i % ${REGIONS.length}],
          timestamptz '2024-01-01 00:00Z' + make_interval(days => (i * 37) % ${DAYS}, mins => (i * 13) % 1440),
          CASE WHEN i % 23 = 0 THEN 'refunded' ELSE 'paid' END
   FROM generate_series(1, ${ORDERS}) AS i`,
  `INSERT INTO order_items (order_id, product_id, category, quantity, unit_price)
   SELECT o.id,
          1 + (o.id * 31 + n * 17) % 400,
          ($1::text[])[1 + (o.id * 3 + n) % ${CATEGORIES.length}],
          1 + (o.id + n) % 4,
          round(3 + ((o.id * 53 + n * 29) % 9700) / 100.0, 2)
   FROM orders o, generate_series(1, 1 + o.id % 4) AS n`,
];

async function ensureSchema() {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Two instances starting against one empty database: the second waits here, then finds the data.
    await client.query('SELECT pg_advisory_xact_lock(20240101)');
    await client.query(`CREATE TABLE IF NOT EXISTS orders (
      id serial PRIMARY KEY, customer_id int NOT NULL, region text NOT NULL,
      placed_at timestamptz NOT NULL, status text NOT NULL)`);
    await client.query(`CREATE TABLE IF NOT EXISTS order_items (
      order_id int NOT NULL REFERENCES orders (id), product_id int NOT NULL, category text NOT NULL,
      quantity int NOT NULL, unit_price numeric(10, 2) NOT NULL)`);
    await client.query('CREATE INDEX IF NOT EXISTS order_items_order_id ON order_items (order_id)');
    const { rows } = await client.query('SELECT count(*)::int AS n FROM orders');
    if (rows[0].n === 0) {
      await client.query(SEED[0], [REGIONS]);
      await client.query(SEED[1], [CATEGORIES]);
      await client.query('ANALYZE orders, order_items');
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/** Daily revenue per region and category: one row per (region, category, day) with sales, ~3600 rows. */
const DAILY_REVENUE = `
  SELECT o.region, i.category, to_char(o.placed_at, 'YYYY-MM-DD') AS day,
         count(DISTINCT o.id)::int AS orders, sum(i.quantity)::int AS units,
         sum(i.quantity * i.unit_price) AS revenue
  FROM orders o JOIN order_items i ON i.order_id = o.id
  WHERE o.status = 'paid'
  GROUP BY o.region, i.category, day
  ORDER BY o.region, i.category, day`;

const median = (sorted) => (sorted.length % 2 ? sorted[sorted.length >> 1] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2);

/** Holt's linear smoothing, its parameters chosen by a grid search on the one-step-ahead error. */
function forecast(values, days) {
  let best = { sse: Infinity, level: 0, trend: 0 };
  for (let alpha = 0.05; alpha < 1; alpha += 0.05) {
    for (let beta = 0.02; beta < 0.5; beta += 0.02) {
      let level = values[0];
      let trend = 0;
      let sse = 0;
      for (let t = 1; t < values.length; t++) {
        const error = values[t] - (level + trend);
        sse += error * error;
        const previous = level;
        level = alpha * values[t] + (1 - alpha) * (level + trend);
        trend = beta * (level - previous) + (1 - beta) * trend;
      }
      if (sse < best.sse) best = { sse, level, trend };
    }
  }
  return Array.from({ length: days }, (_, h) => Math.max(0, best.level + best.trend * (h + 1)));
}

/**
 * Turns the daily rows into the report: per region and category, the quarter's totals, days whose
 * revenue is far from the 28-day rolling median (robust z-score against the rolling MAD), and a
 * 14-day forecast. Per-row work in JavaScript: this is the endpoint's hot loop.
 */
function buildRevenueReport(rows) {
  const series = new Map();
  for (const row of rows) {
    const key = `${row.region}/${row.category}`;
    if (!series.has(key)) series.set(key, { region: row.region, category: row.category, byDay: new Map() });
    series.get(key).byDay.set(row.day, { orders: row.orders, units: row.units, revenue: Number(row.revenue) });
  }
  const WINDOW = 28;
  const report = [];
  for (const { region, category, byDay } of series.values()) {
    const days = [...byDay.keys()].sort();
    const revenue = days.map((day) => byDay.get(day).revenue);
    const anomalies = [];
    for (let t = WINDOW; t < revenue.length; t++) {
      const window = revenue.slice(t - WINDOW, t).sort((a, b) => a - b);
      const center = median(window);
      const mad = median(window.map((v) => Math.abs(v - center)).sort((a, b) => a - b)) || 1;
      const z = (0.6745 * (revenue[t] - center)) / mad;
      if (Math.abs(z) > 3.5) anomalies.push({ day: days[t], revenue: revenue[t], z: Math.round(z * 100) / 100 });
    }
    const totals = [...byDay.values()].reduce((sum, d) => ({ orders: sum.orders + d.orders, units: sum.units + d.units, revenue: sum.revenue + d.revenue }), {
      orders: 0,
      units: 0,
      revenue: 0,
    });
    const next = forecast(revenue, 14);
    report.push({
      region,
      category,
      days: days.length,
      ...totals,
      revenue: Math.round(totals.revenue * 100) / 100,
      anomalies,
      forecast14d: Math.round(next.reduce((a, b) => a + b, 0)),
    });
  }
  return report.sort((a, b) => b.revenue - a.revenue);
}

const app = express();

app.get('/reports/revenue', async (_req, res) => {
  const { rows } = await pool.query(DAILY_REVENUE);
  const report = buildRevenueReport(rows);
  res.json({ rows: rows.length, series: report.length, top: report.slice(0, 5), report });
});

app.get('/orders/:id', async (req, res) => {
  const id = Number(req.params.id);
  if (!Number.isSafeInteger(id)) return res.status(404).json({ error: 'no such order' });
  const { rows } = await pool.query(
    `SELECT o.id, o.region, o.placed_at, o.status,
            json_agg(json_build_object('product', i.product_id, 'quantity', i.quantity, 'unitPrice', i.unit_price)) AS items
     FROM orders o JOIN order_items i ON i.order_id = o.id
     WHERE o.id = $1 GROUP BY o.id`,
    [id],
  );
  if (rows.length === 0) res.status(404).json({ error: 'no such order' });
  else res.json(rows[0]);
});

await ensureSchema();
const server = app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
