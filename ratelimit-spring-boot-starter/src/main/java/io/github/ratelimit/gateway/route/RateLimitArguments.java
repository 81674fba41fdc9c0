package io.github.ratelimit.gateway.route;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.protection.Priority;
import org.jspecify.annotations.Nullable;

/**
 * Arguments of the {@code RateLimit} filter on one route, as both front ends take them: in route configuration
 * ({@code args: { group: login, key-by: ip, cost: 1, critical: true }}) or from Java. Every argument is optional;
 * {@link RateLimitRoutes#settings} resolves the defaults and checks the values against the limits in force.
 */
public class RateLimitArguments {

	private @Nullable String group;

	private @Nullable KeyBy keyBy;

	private @Nullable String header;

	private @Nullable Long cost;

	private @Nullable Boolean critical;

	private @Nullable Boolean shadow;

	private @Nullable String usage;

	private @Nullable String reserve;

	private @Nullable Long reserveMax;

	private @Nullable String countWhen;

	private @Nullable String protect;

	private @Nullable Priority priority;

	/**
	 * The endpoint group whose limits apply; {@code null} to use the route id.
	 * @return the group name or {@code null}
	 */
	public @Nullable String getGroup() {
		return this.group;
	}

	/**
	 * Set the endpoint group.
	 * @param group a group known to the configuration
	 * @return this
	 */
	public RateLimitArguments setGroup(@Nullable String group) {
		this.group = group;
		return this;
	}

	/**
	 * What identifies the client; {@code null} means {@link KeyBy#API_KEY}.
	 * @return the key-by setting or {@code null}
	 */
	public @Nullable KeyBy getKeyBy() {
		return this.keyBy;
	}

	/**
	 * Set what identifies the client.
	 * @param keyBy api-key, ip, principal or header
	 * @return this
	 */
	public RateLimitArguments setKeyBy(@Nullable KeyBy keyBy) {
		this.keyBy = keyBy;
		return this;
	}

	/**
	 * The request header whose value identifies the client; required with {@link KeyBy#HEADER}, refused otherwise.
	 * @return the header's name or {@code null}
	 */
	public @Nullable String getHeader() {
		return this.header;
	}

	/**
	 * Set the request header whose value identifies the client ({@code key-by: header}).
	 * @param header a header field name, e.g. {@code X-Tenant-Id}
	 * @return this
	 */
	public RateLimitArguments setHeader(@Nullable String header) {
		this.header = header;
		return this;
	}

	/**
	 * Tokens one request takes; {@code null} means 1.
	 * @return the cost in tokens or {@code null}
	 */
	public @Nullable Long getCost() {
		return this.cost;
	}

	/**
	 * Set the tokens one request takes.
	 * @param cost 1 to the smallest capacity of the limits that apply
	 * @return this
	 */
	public RateLimitArguments setCost(@Nullable Long cost) {
		this.cost = cost;
		return this;
	}

	/**
	 * Whether the route fails closed when the limiter is unavailable; {@code null} takes the group's setting.
	 * @return the critical flag or {@code null}
	 */
	public @Nullable Boolean getCritical() {
		return this.critical;
	}

	/**
	 * Set whether the route fails closed.
	 * @param critical the flag
	 * @return this
	 */
	public RateLimitArguments setCritical(@Nullable Boolean critical) {
		this.critical = critical;
		return this;
	}

	/**
	 * Whether the route's decisions are only observed, never enforced; {@code null} takes the group's setting.
	 * @return the shadow flag or {@code null}
	 */
	public @Nullable Boolean getShadow() {
		return this.shadow;
	}

	/**
	 * Set whether the route runs in shadow mode.
	 * @param shadow the flag
	 * @return this
	 */
	public RateLimitArguments setShadow(@Nullable Boolean shadow) {
		this.shadow = shadow;
		return this;
	}

	/**
	 * Where an answer's usage is read, charged in the group's limits counting usage: {@code json:<path>} (a number in
	 * the JSON body, or in the last event of a {@code text/event-stream} answer that carries it),
	 * {@code header:<name>} (a response header) or {@code bytes} (the body's size); {@code null} when the group has no
	 * limit counting usage. See {@link RouteUsage}.
	 * @return the usage argument or {@code null}
	 */
	public @Nullable String getUsage() {
		return this.usage;
	}

	/**
	 * Set where an answer's usage is read.
	 * @param usage {@code json:<path>}, {@code header:<name>} or {@code bytes}
	 * @return this
	 */
	public RateLimitArguments setUsage(@Nullable String usage) {
		this.usage = usage;
		return this;
	}

	/**
	 * What a request reserves in the limits counting usage before it is forwarded: a number of units,
	 * {@code header:<name>} or {@code json:<path>} of the request; {@code null} means {@link #getReserveMax()}.
	 * @return the reserve argument or {@code null}
	 */
	public @Nullable String getReserve() {
		return this.reserve;
	}

	/**
	 * Set what a request reserves.
	 * @param reserve a number, {@code header:<name>} or {@code json:<path>}
	 * @return this
	 */
	public RateLimitArguments setReserve(@Nullable String reserve) {
		this.reserve = reserve;
		return this;
	}

	/**
	 * Most units one request reserves (a request that carries no estimate reserves it); {@code null} means the
	 * smallest capacity of the group's limits counting usage.
	 * @return the ceiling or {@code null}
	 */
	public @Nullable Long getReserveMax() {
		return this.reserveMax;
	}

	/**
	 * Set the most units one request reserves.
	 * @param reserveMax 1 to the smallest capacity of the group's limits counting usage
	 * @return this
	 */
	public RateLimitArguments setReserveMax(@Nullable Long reserveMax) {
		this.reserveMax = reserveMax;
		return this;
	}

	/**
	 * The answer statuses that count, e.g. {@code 401,403} or {@code 4xx}: a request whose answer has another status
	 * is given back what it took; {@code null} when every answer counts.
	 * @return the count-when argument or {@code null}
	 */
	public @Nullable String getCountWhen() {
		return this.countWhen;
	}

	/**
	 * Set the answer statuses that count.
	 * @param countWhen status codes and classes, separated by commas
	 * @return this
	 */
	public RateLimitArguments setCountWhen(@Nullable String countWhen) {
		this.countWhen = countWhen;
		return this;
	}

	/**
	 * The upstream protection the route's admitted requests go through ({@code ratelimit.protections.<name>});
	 * {@code null} for none.
	 * @return the protection's name or {@code null}
	 */
	public @Nullable String getProtect() {
		return this.protect;
	}

	/**
	 * Set the upstream protection the route's admitted requests go through.
	 * @param protect a name under {@code ratelimit.protections}
	 * @return this
	 */
	public RateLimitArguments setProtect(@Nullable String protect) {
		this.protect = protect;
		return this;
	}

	/**
	 * The priority of the route's requests in its protection for every plan; {@code null} for each plan's own.
	 * @return the priority or {@code null}
	 */
	public @Nullable Priority getPriority() {
		return this.priority;
	}

	/**
	 * Set the priority of the route's requests for every plan (a login route: critical). Needs {@code protect}.
	 * @param priority critical, high, normal or low
	 * @return this
	 */
	public RateLimitArguments setPriority(@Nullable Priority priority) {
		this.priority = priority;
		return this;
	}

	@Override
	public String toString() {
		return "RateLimitArguments[group=" + this.group + ", keyBy=" + this.keyBy + ", header=" + this.header
				+ ", cost=" + this.cost + ", critical=" + this.critical + ", shadow=" + this.shadow + ", usage="
				+ this.usage + ", reserve=" + this.reserve + ", reserveMax=" + this.reserveMax + ", countWhen="
				+ this.countWhen + ", protect=" + this.protect + ", priority=" + this.priority + "]";
	}

}
