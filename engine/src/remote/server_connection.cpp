// A connection to the remote server: the transport (server_state.h).

#include "server_state.h"

namespace lmprof::engine::remote {

RemoteServer::Impl::Connection::Connection(Impl& server, tcp::socket socket)
    : m_server(server), m_socket(std::move(socket)), m_timer(server.io) {
    std::error_code ec;
    const auto remote = m_socket.remote_endpoint(ec);
    peer =
        ec ? std::string("?") : remote.address().to_string() + ":" + std::to_string(remote.port());
}

void RemoteServer::Impl::Connection::start() {
    // No hello in time: refused, so a silent connection holds nothing for long.
    m_timer.expires_after(m_server.options.helloTimeout);
    m_timer.async_wait([self = shared_from_this()](std::error_code ec) {
        if (!ec && !self->accepted && !self->m_closing) {
            self->refuse(code::kTimeout,
                         "no hello within " +
                             std::to_string(self->m_server.options.helloTimeout.count()) + " ms");
        }
    });
    readNext();
}

void RemoteServer::Impl::Connection::wantRuns(const std::vector<int>& runs) {
    if (runs.empty()) {
        m_fetchAll = true;
    }
    for (int index : runs) {
        if (m_fetched.size() >= kMaxFetched) {
            m_fetchAll = true; // past the bound, every kept run: none asked for is lost
            break;
        }
        m_fetched.insert(index);
    }
}

void RemoteServer::Impl::Connection::clearWanted() {
    m_fetchAll = false;
    m_fetched.clear();
}

void RemoteServer::Impl::Connection::sendLine(std::string line, bool counted) {
    if (m_closing && !m_finalQueued) {
        return;
    }
    m_outBytes += counted ? line.size() : 0;
    m_replayBytes += counted ? 0 : line.size();
    m_out.emplace_back(std::move(line), counted);
    if (m_outBytes > kMaxQueuedBytes) {
        // A client that stopped reading: it is dropped, the run is not held up.
        m_server.log("dropped " + peer + ": over " + std::to_string(kMaxQueuedBytes >> 20) +
                     " MiB of messages unread");
        close();
        return;
    }
    if (!m_writing) {
        writeNext();
    }
}

void RemoteServer::Impl::Connection::refuse(std::string_view errorCode, const std::string& why) {
    if (m_closing) {
        return;
    }
    m_server.log("refused " + peer + ": " + std::string(errorCode) + ": " + why);
    m_finalQueued = true;
    send(errorMessage(errorCode, why, true));
    m_closing = true;
    m_finalQueued = false;
}

void RemoteServer::Impl::Connection::close() {
    m_closing = true;
    std::error_code ec;
    m_timer.cancel();
    m_socket.close(ec);
    m_server.dropLabsOf(*this);
    m_server.connections.erase(shared_from_this());
}

void RemoteServer::Impl::Connection::readNext() {
    if (m_closing) {
        return;
    }
    m_reading = true;
    // Before the hello a line may be a few KiB: an unauthenticated peer holds little.
    asio::async_read_until(
        m_socket, asio::dynamic_buffer(m_in, (accepted ? kMaxMessageBytes : kMaxHelloBytes) + 1),
        '\n', [self = shared_from_this()](std::error_code ec, size_t n) { self->onRead(ec, n); });
}

void RemoteServer::Impl::Connection::onRead(std::error_code ec, size_t n) {
    m_reading = false;
    if (m_closing) {
        if (m_lingering) {
            ec ? close() : discard();
        }
        return;
    }
    if (ec == asio::error::not_found) {
        refuse(code::kTooLarge, accepted ? "a message is over the limit of " +
                                               std::to_string(kMaxMessageBytes) + " bytes"
                                         : "a message before the hello is over the limit of " +
                                               std::to_string(kMaxHelloBytes) + " bytes");
        return;
    }
    if (ec) {
        m_server.log((accepted ? "client " + peer + " left" : peer + " closed before its hello") +
                     (ec == asio::error::eof ? std::string() : ": " + ec.message()));
        close();
        return;
    }
    std::string line = m_in.substr(0, n - 1);
    m_in.erase(0, n);
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    try {
        m_server.command(*this, decode(line, /*fromClient=*/true));
    } catch (const ProtocolError& e) {
        refuse(e.errorCode(), e.what());
    }
    m_server.commandsRead.fetch_add(1, std::memory_order_release); // handled
    readNext();
}

void RemoteServer::Impl::Connection::writeNext() {
    if (m_out.empty()) {
        m_writing = false;
        if (m_closing) {
            linger();
        }
        return;
    }
    m_writing = true;
    asio::async_write(m_socket, asio::buffer(m_out.front().first),
                      [self = shared_from_this()](std::error_code ec, size_t) {
                          if (ec) {
                              self->close();
                              return;
                          }
                          const auto& [line, counted] = self->m_out.front();
                          self->m_outBytes -= counted ? line.size() : 0;
                          self->m_replayBytes -= counted ? 0 : line.size();
                          self->m_out.pop_front();
                          if (self->m_replayBytes == 0 && self->wantsRuns() && !self->m_closing) {
                              self->m_server.serveFetch(*self);
                          }
                          self->writeNext();
                      });
}

void RemoteServer::Impl::Connection::linger() {
    std::error_code ec;
    m_socket.shutdown(tcp::socket::shutdown_send, ec);
    m_timer.expires_after(std::chrono::seconds(10));
    m_timer.async_wait([self = shared_from_this()](std::error_code e) {
        if (!e) {
            self->close();
        }
    });
    m_lingering = true;
    if (!m_reading) { // else the read in flight goes on discarding when it returns
        discard();
    }
}

void RemoteServer::Impl::Connection::discard() {
    m_socket.async_read_some(asio::buffer(m_scratch),
                             [self = shared_from_this()](std::error_code ec, size_t) {
                                 if (ec) {
                                     self->close();
                                 } else {
                                     self->discard();
                                 }
                             });
}

} // namespace lmprof::engine::remote
