// The rendezvous (TCPStore) and the Gloo process group. ProcessGroupGloo's header needs
// Gloo's headers, which the torch wheel does not ship: Debian's libgloo-dev provides them
// (docs/DISTRIBUTED.md says which combination is tested; ddp_test checks that they agree).

#include "data_parallel/process_group.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace lmprof::engine::ddp {

namespace {

bool isLoopback(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

std::string where(const RankEndpoint& e) {
    return e.masterAddr + ":" + std::to_string(e.masterPort);
}

// TCPStore's errors say what the socket said; the user needs to know what to change.
[[noreturn]] void storeFailed(const RankEndpoint& e, const std::string& what,
                              std::chrono::milliseconds timeout) {
    const bool inUse = what.find("ddress already in use") != std::string::npos ||
                       what.find("EADDRINUSE") != std::string::npos;
    if (e.rank == 0 && inUse) {
        throw std::runtime_error("MASTER_PORT " + std::to_string(e.masterPort) + " on " +
                                 e.masterAddr +
                                 " is in use (another run, or another program); choose another "
                                 "port: " +
                                 what);
    }
    const double seconds = std::chrono::duration<double>(timeout).count();
    throw std::runtime_error((e.rank == 0 ? "not every rank reached the rendezvous at " + where(e)
                                          : "could not reach rank 0 at " + where(e)) +
                             " within " + std::to_string(static_cast<int>(seconds)) +
                             " s: " + what);
}

} // namespace

Group join(const RankEndpoint& e, DdpBackend backend, std::chrono::milliseconds timeout,
           int cudaIndex) {
    Group g;
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(e.masterPort);
    options.isServer = e.rank == 0;
    options.numWorkers = static_cast<size_t>(e.worldSize);
    options.waitWorkers = true;
    options.timeout = timeout;
    try {
        g.store = c10::make_intrusive<c10d::TCPStore>(e.masterAddr, options);
    } catch (const std::exception& ex) {
        storeFailed(e, ex.what(), timeout);
    }
    try {
        if (backend == DdpBackend::Nccl) {
            g.backend = makeNcclBackend(g.store, e.rank, e.worldSize, timeout, cudaIndex);
            return g;
        }
        auto gloo = c10d::ProcessGroupGloo::Options::create(timeout);
        // A local run talks over loopback; across machines Gloo binds the interface
        // GLOO_SOCKET_IFNAME names, or the address this host's name resolves to.
        if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
            gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
        } else if (isLoopback(e.masterAddr)) {
            gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(e.masterAddr));
        } else {
            gloo->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
        }
        g.backend = c10::make_intrusive<c10d::ProcessGroupGloo>(g.store, e.rank, e.worldSize, gloo);
    } catch (const std::exception& ex) {
        throw std::runtime_error(std::string("building the ") + std::string(toString(backend)) +
                                 " process group failed: " + ex.what());
    }
    return g;
}

} // namespace lmprof::engine::ddp
