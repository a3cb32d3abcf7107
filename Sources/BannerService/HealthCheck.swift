import Logging
import MicroHTTP

/// `banner-server healthcheck`: what a container's HEALTHCHECK or a Kubernetes exec probe runs.
public enum HealthCheck {
    /// 0 when GET /healthz at the configured address answers 200 `{"status":"ok"}`; else 1, and
    /// a line on standard error that says what went wrong.
    public static func run(_ configuration: ServiceConfiguration, timeoutSeconds: Int = 2) -> Int32 {
        switch HTTPProbe.get(
            host: configuration.host, port: configuration.port, path: "/healthz", timeoutSeconds: timeoutSeconds)
        {
        case .success(let answer) where answer.status == 200 && answer.body == Array("{\"status\":\"ok\"}\n".utf8):
            return 0
        case .success(let answer):
            StandardStream.error.writeLine("banner-server healthcheck: /healthz answered \(answer.status)")
            return 1
        case .failure(let error):
            StandardStream.error.writeLine("banner-server healthcheck: \(error)")
            return 1
        }
    }
}
