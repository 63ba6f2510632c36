//! Where report files live: an object store through the `object_store`
//! crate, a directory (`serve --data-dir`) by default or S3-compatible
//! storage by URL (`--report-store s3://bucket/prefix`), which several
//! instances share. Files are written and read as streams of parts, so
//! neither a run nor a download holds a whole file in memory.

use anyhow::Context as _;
use bytes::Bytes;
use futures::StreamExt;
use object_store::buffered::BufWriter;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

/// What a writer buffers before it sends a part: S3's least part size,
/// and with two parts in flight the most a run holds of its file.
const PART_BYTES: usize = 5 * 1024 * 1024;

#[derive(Clone)]
pub struct ReportFiles {
    store: Arc<dyn ObjectStore>,
}

impl std::fmt::Debug for ReportFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReportFiles({})", self.store)
    }
}

/// A file being written; `finish` makes it visible, `abort` drops it.
pub struct FileWriter {
    inner: BufWriter,
}

impl FileWriter {
    pub async fn write(&mut self, bytes: Bytes) -> crate::error::Result<()> {
        self.inner.put(bytes).await.map_err(failed)
    }

    pub async fn finish(mut self) -> crate::error::Result<()> {
        self.inner.shutdown().await.map_err(|e| crate::error::Error::Internal(format!("report store: {e}")))
    }

    pub async fn abort(mut self) {
        if let Err(e) = self.inner.abort().await {
            tracing::warn!(error = %e, "report store: abandoning a file");
        }
    }
}

fn failed(e: object_store::Error) -> crate::error::Error {
    crate::error::Error::Internal(format!("report store: {e}"))
}

impl ReportFiles {
    /// The store `url` names (`s3://bucket/prefix`, its credentials and
    /// endpoint from the `AWS_*` environment variables), else the
    /// directory `dir` (made when missing).
    pub fn open(dir: &std::path::Path, url: Option<&str>) -> anyhow::Result<ReportFiles> {
        let store: Arc<dyn ObjectStore> = match url {
            Some(url) => {
                let parsed = url::Url::parse(url).with_context(|| format!("--report-store {url:?} is not a URL"))?;
                anyhow::ensure!(parsed.scheme() == "s3", "--report-store must be an s3:// URL (S3 or S3-compatible storage)");
                let s3 = object_store::aws::AmazonS3Builder::from_env().with_url(url).build().context("--report-store")?;
                let prefix = parsed.path().trim_matches('/');
                if prefix.is_empty() { Arc::new(s3) } else { Arc::new(object_store::prefix::PrefixStore::new(s3, prefix)) }
            }
            None => {
                std::fs::create_dir_all(dir).with_context(|| format!("creating the data directory {}", dir.display()))?;
                let local = object_store::local::LocalFileSystem::new_with_prefix(dir).with_context(|| format!("the data directory {}", dir.display()))?;
                // a run's directory goes with its last file
                Arc::new(local.with_automatic_cleanup(true))
            }
        };
        Ok(ReportFiles { store })
    }

    /// A new file at `key`.
    pub fn create(&self, key: &str) -> FileWriter {
        FileWriter { inner: BufWriter::with_capacity(self.store.clone(), Path::from(key), PART_BYTES).with_max_concurrency(2) }
    }

    /// The file at `key`: its size and its bytes as they are read; None
    /// when there is none.
    pub async fn read(&self, key: &str) -> crate::error::Result<Option<(u64, futures::stream::BoxStream<'static, std::io::Result<Bytes>>)>> {
        match self.store.get(&Path::from(key)).await {
            Ok(got) => {
                let size = got.meta.size;
                Ok(Some((size, got.into_stream().map(|r| r.map_err(std::io::Error::other)).boxed())))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(failed(e)),
        }
    }

    /// Deletes every file under `prefix` (a run's: its own, and any a
    /// cut-off try left).
    pub async fn delete_all(&self, prefix: &str) -> crate::error::Result<()> {
        let mut listed = self.store.list(Some(&Path::from(prefix)));
        while let Some(meta) = listed.next().await {
            self.delete(meta.map_err(failed)?.location.as_ref()).await?;
        }
        Ok(())
    }

    /// Deletes the file at `key`; nothing there is no error.
    pub async fn delete(&self, key: &str) -> crate::error::Result<()> {
        match self.store.delete(&Path::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(failed(e)),
        }
    }
}
