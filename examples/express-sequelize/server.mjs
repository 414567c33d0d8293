// A blog API over PostgreSQL through Sequelize 6, written the way ORM code often is: the article
// list loads its articles, then each article's author and comments one query at a time (N+1), and
// a second route gets the same page with a count and one query with includes, so the two can be
// compared in a trace and a flame graph. DATABASE_URL names the database; the tables and seed data
// are created on start when missing. Prints `listening <port>` once ready (PORT, default 3000; 0
// picks a free port; HOST, default 127.0.0.1).
import express from 'express';
import { DataTypes, Op, Sequelize } from 'sequelize';

const AUTHORS = 50;
const ARTICLES = 500;
const COMMENTS_PER_ARTICLE = 10;
const TAGS = ['javascript', 'postgres', 'node', 'performance', 'testing', 'design', 'security', 'devops', 'css', 'databases', 'tracing', 'profiling'];
const PAGE = 20;
const WORDS =
  'query index latency cache buffer socket stream parser cursor schema model join table row column span trace profile sample thread event loop promise callback heap allocation garbage collector pool connection transaction commit rollback lock replica shard partition vacuum planner'.split(
    ' ',
  );

const sequelize = new Sequelize(process.env.DATABASE_URL, { dialect: 'postgres', logging: false, pool: { max: 5 } });

const model = { underscored: true };
const Author = sequelize.define(
  'Author',
  { name: { type: DataTypes.STRING, allowNull: false }, email: { type: DataTypes.STRING, allowNull: false, unique: true }, bio: DataTypes.TEXT },
  { ...model, tableName: 'authors' },
);
const Article = sequelize.define(
  'Article',
  {
    slug: { type: DataTypes.STRING, allowNull: false, unique: true },
    title: { type: DataTypes.STRING, allowNull: false },
    body: { type: DataTypes.TEXT, allowNull: false },
    publishedAt: { type: DataTypes.DATE, allowNull: false },
  },
  { ...model, tableName: 'articles', indexes: [{ fields: ['published_at'] }] },
);
const Comment = sequelize.define(
  'Comment',
  { body: { type: DataTypes.TEXT, allowNull: false }, authorName: { type: DataTypes.STRING, allowNull: false } },
  { ...model, tableName: 'comments', indexes: [{ fields: ['article_id'] }] },
);
const Tag = sequelize.define('Tag', { name: { type: DataTypes.STRING, allowNull: false, unique: true } }, { ...model, tableName: 'tags', timestamps: false });

Author.hasMany(Article, { as: 'articles', foreignKey: 'authorId' });
Article.belongsTo(Author, { as: 'author', foreignKey: 'authorId' });
Article.hasMany(Comment, { as: 'comments', foreignKey: 'articleId' });
Comment.belongsTo(Article, { as: 'article', foreignKey: 'articleId' });
Article.belongsToMany(Tag, { as: 'tags', through: 'article_tags', foreignKey: 'articleId', otherKey: 'tagId', timestamps: false });
Tag.belongsToMany(Article, { as: 'articles', through: 'article_tags', foreignKey: 'tagId', otherKey: 'articleId', timestamps: false });

/** Deterministic prose: `words` words drawn from WORDS by a 32-bit xorshift seeded with `seed`. */
function prose(seed, words) {
  const out = [];
  let x = ((seed + 1) * 2654435761) >>> 0 || 1;
  for (let i = 0; i < words; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    // A skewed pick: some words are common in every article, others mark a few.
    out.push(WORDS[Math.floor(WORDS.length * (x / 2 ** 32) ** 2)]);
  }
  return out.join(' ');
}

/** Creates the tables and, when there are no authors yet, 50 authors, 500 articles with tags and 5000 comments. */
async function seed() {
  await sequelize.transaction(async (transaction) => {
    // Two instances starting against one empty database: the second waits here, then finds the data.
    await sequelize.query('SELECT pg_advisory_xact_lock(20240102)', { transaction });
    await sequelize.sync({ transaction });
    if ((await Author.count({ transaction })) > 0) return;
    const authors = await Author.bulkCreate(
      Array.from({ length: AUTHORS }, (_, i) => ({ name: `Author ${i + 1}`, email: `author${i + 1}@example.com`, bio: prose(i, 30) })),
      { transaction },
    );
    const tags = await Tag.bulkCreate(
      TAGS.map((name) => ({ name })),
      { transaction },
    );
    const start = Date.UTC(2024, 0, 1);
    const articles = await Article.bulkCreate(
      Array.from({ length: ARTICLES }, (_, i) => ({
        slug: `article-${i + 1}`,
        title: prose(i + 1000, 6),
        body: prose(i + 2000, 400),
        publishedAt: new Date(start + i * 6 * 3600_000),
        authorId: authors[(i * 7) % AUTHORS].id,
      })),
      { transaction },
    );
    await sequelize.getQueryInterface().bulkInsert(
      'article_tags',
      articles.flatMap((article, i) => [0, 1, 2].map((k) => ({ article_id: article.id, tag_id: tags[(i + k * 5) % TAGS.length].id }))),
      { transaction },
    );
    await Comment.bulkCreate(
      articles.flatMap((article, i) =>
        Array.from({ length: COMMENTS_PER_ARTICLE }, (_, k) => {
          const at = new Date(article.publishedAt.getTime() + (k + 1) * 3600_000);
          return { articleId: article.id, authorName: `Reader ${(i * 13 + k) % 300}`, body: prose(i * 100 + k, 25), createdAt: at, updatedAt: at };
        }),
      ),
      { transaction },
    );
  });
}

const summary = (article, author, comments) => ({
  slug: article.slug,
  title: article.title,
  publishedAt: article.publishedAt,
  author: { name: author.name, email: author.email },
  commentCount: comments.length,
  lastComment: comments.length === 0 ? null : { by: comments.at(-1).authorName, at: comments.at(-1).createdAt },
});

const app = express();
app.use(express.json());

/**
 * The newest 20 articles and how many there are, N+1 style: a count, one query for the page, then
 * for each article one query for its author and one for its comments, in sequence (42 queries).
 */
app.get('/api/articles', async (_req, res) => {
  const articlesCount = await Article.count();
  const articles = await Article.findAll({ order: [['publishedAt', 'DESC']], limit: PAGE });
  const page = [];
  for (const article of articles) {
    const author = await article.getAuthor();
    const comments = await article.getComments({ order: [['createdAt', 'ASC']] });
    page.push(summary(article, author, comments));
  }
  res.json({ articlesCount, articles: page });
});

/** The same page in two queries: the count, and the articles joined with their authors and comments. */
app.get('/api/articles/feed', async (_req, res) => {
  const { count, rows } = await Article.findAndCountAll({
    include: [
      { model: Author, as: 'author' },
      { model: Comment, as: 'comments' },
    ],
    order: [
      ['publishedAt', 'DESC'],
      [{ model: Comment, as: 'comments' }, 'createdAt', 'ASC'],
    ],
    limit: PAGE,
    distinct: true,
  });
  res.json({ articlesCount: count, articles: rows.map((article) => summary(article, article.author, article.comments)) });
});

/** One article with its author, tags and comments. */
app.get('/api/articles/:slug', async (req, res) => {
  const article = await Article.findOne({
    where: { slug: req.params.slug },
    include: [
      { model: Author, as: 'author' },
      { model: Tag, as: 'tags', through: { attributes: [] } },
      { model: Comment, as: 'comments' },
    ],
  });
  if (article === null) return res.status(404).json({ error: 'no such article' });
  res.json(article);
});

/**
 * Ranks every article by the cosine similarity of its words' TF-IDF weights to one article's:
 * per-word work in JavaScript over all 500 bodies, the CPU-heavy endpoint.
 */
function rankSimilarArticles(target, articles) {
  const termsOf = (text) => {
    const counts = new Map();
    for (const word of text.toLowerCase().split(/[^a-z]+/)) if (word) counts.set(word, (counts.get(word) ?? 0) + 1);
    return counts;
  };
  const documents = articles.map((article) => ({ article, terms: termsOf(`${article.title} ${article.body}`) }));
  const documentFrequency = new Map();
  for (const { terms } of documents) for (const word of terms.keys()) documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
  const weights = (terms) => {
    const vector = new Map();
    let norm = 0;
    for (const [word, count] of terms) {
      const weight = (1 + Math.log(count)) * Math.log(documents.length / documentFrequency.get(word));
      vector.set(word, weight);
      norm += weight * weight;
    }
    return { vector, norm: Math.sqrt(norm) || 1 };
  };
  const wanted = weights(termsOf(`${target.title} ${target.body}`));
  return documents
    .filter(({ article }) => article.id !== target.id)
    .map(({ article, terms }) => {
      const { vector, norm } = weights(terms);
      let dot = 0;
      for (const [word, weight] of wanted.vector) dot += weight * (vector.get(word) ?? 0);
      return { slug: article.slug, title: article.title, score: Math.round((dot / (norm * wanted.norm)) * 1e4) / 1e4 };
    })
    .sort((a, b) => b.score - a.score)
    .slice(0, 5);
}

app.get('/api/articles/:slug/similar', async (req, res) => {
  const target = await Article.findOne({ where: { slug: req.params.slug } });
  if (target === null) return res.status(404).json({ error: 'no such article' });
  const articles = await Article.findAll({ attributes: ['id', 'slug', 'title', 'body'] });
  res.json({ slug: target.slug, similar: rankSimilarArticles(target, articles) });
});

/** Adds a comment to an article: `{ "authorName": "…", "body": "…" }`. */
app.post('/api/articles/:slug/comments', async (req, res) => {
  const { authorName, body } = req.body ?? {};
  if (typeof authorName !== 'string' || typeof body !== 'string' || !authorName || !body)
    return res.status(400).json({ error: 'authorName and body are required' });
  const article = await Article.findOne({ where: { slug: req.params.slug }, attributes: ['id'] });
  if (article === null) return res.status(404).json({ error: 'no such article' });
  const comment = await Comment.create({ articleId: article.id, authorName, body });
  res.status(201).json(comment);
});

/** Authors with the number of articles each wrote, most prolific first. */
app.get('/api/authors', async (_req, res) => {
  const authors = await Author.findAll({
    attributes: ['id', 'name', [sequelize.fn('count', sequelize.col('articles.id')), 'articleCount']],
    include: [{ model: Article, as: 'articles', attributes: [] }],
    group: ['Author.id'],
    order: [
      [sequelize.literal('"articleCount"'), 'DESC'],
      ['id', 'ASC'],
    ],
  });
  res.json({ authors });
});

/** Articles carrying a tag, newest first. */
app.get('/api/tags/:name/articles', async (req, res) => {
  const tag = await Tag.findOne({ where: { name: req.params.name } });
  if (tag === null) return res.status(404).json({ error: 'no such tag' });
  const articles = await tag.getArticles({
    attributes: ['slug', 'title', 'publishedAt'],
    joinTableAttributes: [],
    where: { publishedAt: { [Op.lte]: new Date() } },
    order: [['publishedAt', 'DESC']],
    limit: PAGE,
  });
  res.json({ tag: tag.name, articles });
});

await seed();
const server = app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
