package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/internal/text"
)

// A gate has a network namespace of its own, with nothing in it. When
// sandbox_allow_domains lists hosts, it reaches them through the run's
// proxy: an HTTP proxy (CONNECT for TLS, absolute-form requests for plain
// HTTP) on a unix socket in the run's temp dir, refusing every other
// host with 403. Inside the namespace socat bridges 127.0.0.1:proxyPort to
// that socket, and HTTP_PROXY/HTTPS_PROXY name it — how claude's own
// sandbox gives its commands their allowed domains.

// proxyPort is where the gate's proxy listens inside its namespace.
const proxyPort = 3128

// proxyEnv names the proxy's socket in the gate's environment.
const proxyEnv = "DEBUSSY_SANDBOX_PROXY"

// bridgeScript starts socat's bridge in the gate's namespace, waits (at
// most ~4 s) until it accepts, runs the gate ("$@") and stops the bridge:
// bubblewrap's init waits for every process of the namespace, so a bridge
// left running would keep the gate from ending.
func bridgeScript(socat string) string {
	q := text.ShellQuote(socat)
	return fmt.Sprintf(`%s TCP-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr "UNIX-CONNECT:$%s" </dev/null >/dev/null 2>&1 &
bridge=$!
i=0
until %s -u OPEN:/dev/null TCP:127.0.0.1:%d 2>/dev/null; do
  i=$((i+1)); [ "$i" -ge 200 ] && break; sleep 0.02
done
"$@"
rc=$?
kill "$bridge" 2>/dev/null
exit "$rc"`, q, proxyPort, proxyEnv, q, proxyPort)
}

// proxySocket starts the run's proxy once and returns its socket.
func (b *Boundary) proxySocket() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proxy == nil {
		p, err := startProxy(filepath.Join(b.temp, "proxy.sock"), b.policy.AllowDomains, b.dial)
		if err != nil {
			return "", err
		}
		b.proxy = p
	}
	return b.proxy.Socket(), nil
}

// Proxy is an HTTP proxy that lets through only the allowed hosts.
type Proxy struct {
	ln      net.Listener
	domains []string
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)

	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// StartProxy serves on a unix socket at path.
func StartProxy(path string, domains []string) (*Proxy, error) {
	return startProxy(path, domains, nil)
}

// startProxy is StartProxy with the dialer the proxy reaches hosts with
// (nil: the network's).
func startProxy(path string, domains []string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*Proxy, error) {
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("start the sandbox's proxy: %w", err)
	}
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		dial = d.DialContext
	}
	p := &Proxy{ln: ln, domains: domains, dial: dial, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Socket is the proxy's unix socket.
func (p *Proxy) Socket() string { return p.ln.Addr().String() }

// Close stops serving and cuts every open connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on && p.closed {
		return false
	}
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c, true) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			defer c.Close()
			p.handle(c)
		}()
	}
}

func (p *Proxy) handle(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return // the client went, or spoke no HTTP
		}
		host := req.URL.Hostname()
		if req.Method == http.MethodConnect {
			host = hostOnly(req.Host)
		}
		if !AllowsHost(p.domains, host) {
			refuse(c, host)
			return
		}
		if req.Method == http.MethodConnect {
			p.tunnel(c, br, req.Host)
			return
		}
		if !p.forward(c, req) {
			return
		}
	}
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func refuse(c net.Conn, host string) {
	body := fmt.Sprintf("debussy sandbox: %s is not in sandbox_allow_domains\n", host)
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

// tunnel connects to addr and copies both ways until either side ends.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, addr string) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "443")
	}
	up, err := p.dial(context.Background(), "tcp", addr)
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	if !p.track(up, true) {
		up.Close()
		return
	}
	defer p.track(up, false)
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		_, _ = br.WriteTo(up) // what the client sent after CONNECT, then the rest
		closeWrite(up)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, up)
		closeWrite(c)
		done <- struct{}{}
	}()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// forward sends one absolute-form request on and copies its response
// back; false when the connection must end.
func (p *Proxy) forward(c net.Conn, req *http.Request) bool {
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		fmt.Fprintf(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return false
	}
	req.RequestURI = ""
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization"} {
		req.Header.Del(h)
	}
	tr := &http.Transport{DialContext: p.dial, Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return false
	}
	defer resp.Body.Close()
	if err := resp.Write(c); err != nil {
		return false
	}
	return !req.Close && !resp.Close
}
