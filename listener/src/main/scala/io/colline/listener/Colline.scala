package io.colline.listener

/** The single publisher of this JVM (re-created only when the colline settings change). */
private[listener] object Colline {
  @volatile private var current: Publisher = _

  def publisher(cfg: Config): Publisher = synchronized {
    if (current == null || current.cfg != cfg) {
      if (current != null) {
        current.shutdown(cfg.shutdownTimeoutMs)
        current.removeShutdownHook()
      }
      current = new Publisher(cfg)
    }
    current
  }

  def get: Option[Publisher] = Option(current)
}
